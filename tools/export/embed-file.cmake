# Writes a C header defining a NUL-terminated char array with the bytes of
# a file: cmake -DIN=file -DOUT=header -DNAME=symbol -P embed-file.cmake
# (the HTML viewer page of export-html.c, kept as a real .html file).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
file(WRITE ${OUT}.tmp "/* Generated from ${IN} by embed-file.cmake: do not edit. */\nstatic const char ${NAME}[] = {\n${hex}0};\n")
configure_file(${OUT}.tmp ${OUT} COPYONLY) # rewritten only when changed
