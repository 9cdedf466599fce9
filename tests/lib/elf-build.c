/* See elf-build.h. */
#include "config.h"

#include <string.h>

#include "elf-build.h"

void
elfb_headers(Elf64_Ehdr *eh, Elf64_Phdr *ph, uint64_t shoff, unsigned shnum,
	     uint64_t load_size)
{
	memset(eh, 0, sizeof(*eh));
	memset(ph, 0, sizeof(*ph));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)shnum;
	eh->e_shstrndx = (Elf64_Half)(shnum - 1);
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R;
	ph->p_filesz = ph->p_memsz = load_size;
	ph->p_align = 4096;
}

size_t
elfb_small(uint8_t *buf, size_t cap)
{
	static const char str[] = "\0obj\0fn\0weak_fn";
	static const char shstr[] = "\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh[4] = { { 0 } };
	Elf64_Sym sym[4] = { { 0 } };
	size_t symoff = 128, stroff = symoff + sizeof(sym);
	size_t shstroff = stroff + sizeof(str);
	size_t shoff = (shstroff + sizeof(shstr) + 7) & ~(size_t)7;
	size_t len = shoff + sizeof(sh);

	if (cap < len)
		return 0;
	memset(buf, 0, len);
	elfb_headers(&eh, &ph, shoff, 4, len);
	sym[1] = (Elf64_Sym){ .st_name = 1, .st_value = 0x40, .st_size = 8,
			      .st_shndx = 1,
			      .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT) };
	sym[2] = (Elf64_Sym){ .st_name = 5, .st_value = 0x80, .st_size = 16,
			      .st_shndx = 1,
			      .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC) };
	sym[3] = (Elf64_Sym){ .st_name = 8, .st_value = 0x80, .st_shndx = 1,
			      .st_info = ELF64_ST_INFO(STB_WEAK, STT_FUNC) };
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_SYMTAB,
			      .sh_offset = symoff, .sh_size = sizeof(sym),
			      .sh_link = 2, .sh_info = 1, .sh_addralign = 8,
			      .sh_entsize = sizeof(Elf64_Sym) };
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_STRTAB,
			      .sh_offset = stroff, .sh_size = sizeof(str) };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB,
			      .sh_offset = shstroff, .sh_size = sizeof(shstr) };
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + symoff, sym, sizeof(sym));
	memcpy(buf + stroff, str, sizeof(str));
	memcpy(buf + shstroff, shstr, sizeof(shstr));
	memcpy(buf + shoff, sh, sizeof(sh));
	return len;
}
