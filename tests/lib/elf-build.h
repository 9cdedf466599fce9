/*
 * Small ELF files built by hand for the ELF parse's tests (fuzz-elf,
 * test-symbols-sandbox): the file header and the one PT_LOAD segment of a
 * 64-bit little-endian x86-64 ET_DYN file whose section headers (shnum of
 * them, the last the section name table) start at shoff.
 */
#ifndef MEMTOP_ELF_BUILD_H
#define MEMTOP_ELF_BUILD_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

void elfb_headers(Elf64_Ehdr *eh, Elf64_Phdr *ph, uint64_t shoff,
		  unsigned shnum, uint64_t load_size);

/*
 * A small ET_DYN file into buf (the fuzz targets' template): one PT_LOAD, .symtab of four symbols (obj
 * at 0x40, fn at 0x80 with 16 bytes, weak_fn at 0x80), .strtab,
 * .shstrtab.  Its length, or 0 when cap is too small.
 */
size_t elfb_small(uint8_t *buf, size_t cap);

#endif
