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
