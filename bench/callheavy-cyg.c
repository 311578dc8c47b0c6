/* callheavy.c built with -finstrument-functions (see CMakeLists.txt). */
#include "callheavy.c"
