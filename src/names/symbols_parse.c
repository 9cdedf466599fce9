/*
 * The ELF parse: segments and symbols of one file, through libdwfl.  Runs
 * in the symbols helper process (symbols_sandbox.c), never in the
 * collector; see symbols_int.h.
 *
 * The symbol table is the one libdwfl picks: .symtab, else separate debug
 * information found by build-id or debuglink, else .gnu_debugdata, else
 * .dynsym (a stripped binary keeps only its exported symbols).
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols_int.h"

void
symbols_table_free(struct symbols_table *t)
{
	free(t->pool);
	free(t->loads);
	free(t->objects);
	free(t->functions);
	memset(t, 0, sizeof(*t));
}

static int
symbols_cmp(const void *a, const void *b)
{
	const struct symbols_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int
symbols_push(struct symbols_sym **arr, size_t *n, size_t *cap,
	     const struct symbols_sym *sym)
{
	if (*n >= SYMBOLS_MAX_SYMS)
		return -ENOMEM;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct symbols_sym *na = realloc(*arr, nc * sizeof(*na));

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	(*arr)[(*n)++] = *sym;
	return 0;
}

/* Global beats weak beats local at one address; among equals the bigger
 * size, so a lookup prefers the symbol users know. */
static uint8_t
symbols_rank(const GElf_Sym *sym)
{
	unsigned bind = GELF_ST_BIND(sym->st_info);

	return (uint8_t)((bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0) *
			 2 + (sym->st_size != 0));
}

/* Copies name into the pool; its offset into *off. */
static int
symbols_pool_add(struct symbols_table *t, const char *name, uint64_t *off)
{
	size_t len = strlen(name) + 1;

	if (t->pool_len + len > SYMBOLS_MAX_POOL)
		return -ENOMEM;
	if (t->pool_len + len > t->pool_cap) {
		size_t cap = t->pool_cap ? t->pool_cap : 4096;
		char *np;

		while (cap < t->pool_len + len)
			cap *= 2;
		np = realloc(t->pool, cap);
		if (!np)
			return -ENOMEM;
		t->pool = np;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->pool_len, name, len);
	*off = t->pool_len;
	t->pool_len += len;
	return 0;
}

static int
symbols_index(struct symbols_table *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		struct symbols_sym e;
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, NULL, NULL);
		unsigned type;
		int ret = 0;

		if (!name || !name[0] || shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		memset(&e, 0, sizeof(e));
		e.addr = addr;
		e.size = sym.st_size;
		e.rank = symbols_rank(&sym);
		if ((type == STT_OBJECT || type == STT_COMMON) && e.size) {
			ret = symbols_pool_add(t, name, &e.name);
			if (ret == 0)
				ret = symbols_push(&t->objects, &t->n_objects,
						   &t->cap_objects, &e);
		} else if (type == STT_FUNC || type == STT_GNU_IFUNC) {
			ret = symbols_pool_add(t, name, &e.name);
			if (ret == 0)
				ret = symbols_push(&t->functions,
						   &t->n_functions,
						   &t->cap_functions, &e);
		}
		if (ret < 0)
			return ret;
	}
	if (t->n_objects)
		qsort(t->objects, t->n_objects, sizeof(*t->objects),
		      symbols_cmp);
	if (t->n_functions)
		qsort(t->functions, t->n_functions, sizeof(*t->functions),
		      symbols_cmp);
	return 0;
}

static int
symbols_read_loads(struct symbols_table *t, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0 || n == 0)
		return -ENOEXEC;
	if (n > SYMBOLS_MAX_LOADS)
		n = SYMBOLS_MAX_LOADS;
	t->loads = calloc(n, sizeof(*t->loads));
	if (!t->loads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct symbols_load *l;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		l = &t->loads[t->n_loads++];
		l->offset = ph.p_offset;
		l->vaddr = ph.p_vaddr;
		l->filesz = ph.p_filesz;
		l->memsz = ph.p_memsz;
	}
	return t->n_loads ? 0 : -ENOEXEC;
}

/* The module's build id into t, when it has one that fits. */
static void
symbols_read_build_id(struct symbols_table *t, Dwfl_Module *mod)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);

	if (len > 0 && len <= SYMBOLS_WIRE_BUILD_ID && bits) {
		memcpy(t->build_id, bits, (size_t)len);
		t->build_id_size = (uint32_t)len;
	}
}

/*
 * Reports fd to a Dwfl of its own at its link-time
 * addresses (base 0), copies what memtop needs (segments, symbols and
 * their names; with id_only the segments and build id alone, which no
 * symbol table or debug file is read for), then ends the Dwfl.
 */
int
symbols_parse(int fd, struct symbols_table *t, bool id_only)
{
	static char *debuginfo_path;	/* NULL: libdwfl's default */
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	dwfl = dwfl_begin(&callbacks);
	if (!dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "elf", "elf", fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		/* Not consumed on failure. */
		close(fd);
		dwfl_end(dwfl);
		return -ENOEXEC;
	}
	elf = dwfl_module_getelf(mod, &bias);
	ret = elf ? symbols_read_loads(t, elf) : -ENOEXEC;
	if (ret == 0)
		symbols_read_build_id(t, mod);
	if (ret == 0 && !id_only)
		ret = symbols_index(t, mod);
	dwfl_end(dwfl);
	return ret;
}

static int
symbols_check_syms(const struct symbols_sym *a, size_t n, size_t pool_len)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].name >= pool_len)
			return -EPROTO;
		if (i && symbols_cmp(&a[i - 1], &a[i]) > 0)
			return -EPROTO;
	}
	return 0;
}

int
symbols_table_check(const struct symbols_table *t)
{
	if (t->n_loads > SYMBOLS_MAX_LOADS || t->n_objects > SYMBOLS_MAX_SYMS ||
	    t->n_functions > SYMBOLS_MAX_SYMS || t->pool_len > SYMBOLS_MAX_POOL)
		return -EPROTO;
	if (t->pool_len && t->pool[t->pool_len - 1] != '\0')
		return -EPROTO;
	if (symbols_check_syms(t->objects, t->n_objects, t->pool_len) < 0 ||
	    symbols_check_syms(t->functions, t->n_functions, t->pool_len) < 0)
		return -EPROTO;
	return 0;
}
