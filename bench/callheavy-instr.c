/* callheavy.c built with the instr plugin (see CMakeLists.txt): a file of
 * its own, so the plugin dependency of its object does not reach bench-plain. */
#include "callheavy.c"
