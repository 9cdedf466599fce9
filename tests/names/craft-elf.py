#!/usr/bin/env python3
"""craft-elf.py PATH [SYMBOLS]: writes a well-formed ELF file whose .symtab
holds SYMBOLS (default 8 Mi) entries, mostly zero (a sparse file: small on
disk, seconds for libdw to walk).  It stands for a crafted binary that
keeps the symbols helper (src/names/symbols_sandbox.c) busy past its
timeout; tests/unit/names/test-symbols-sandbox.c builds the same in C."""
import struct
import sys

path = sys.argv[1]
nsyms = int(sys.argv[2]) if len(sys.argv) > 2 else 8 << 20
symoff = 4096
symsz = nsyms * 24
stroff = symoff + symsz
strtab = b"\0crafted_symbol\0"
shstr = b"\0.symtab\0.strtab\0.shstrtab\0"
shoff = stroff + 4096

eh = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) +
      struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, shoff, 0, 64, 56, 1,
                  64, 4, 3))
ph = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, 4096, 4096, 4096)


def sh(name, typ, off, size, link=0, info=0, align=0, entsize=0):
    return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, link, info,
                       align, entsize)


shdrs = (bytes(64) + sh(1, 2, symoff, symsz, 2, nsyms, 8, 24) +
         sh(9, 3, stroff, len(strtab)) + sh(17, 3, stroff + 64, len(shstr)))
# One named function every 64 KiB of table.
sym = struct.pack("<IBBHQQ", 1, 0x02, 0, 1, 0, 16)
with open(path, "wb") as f:
    f.truncate(shoff + len(shdrs))
    f.write(eh + ph)
    for off in range(symoff + 24, stroff, 65536):
        f.seek(off)
        f.write(sym)
    f.seek(stroff)
    f.write(strtab)
    f.seek(stroff + 64)
    f.write(shstr)
    f.seek(shoff)
    f.write(shdrs)
