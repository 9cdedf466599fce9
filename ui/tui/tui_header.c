/*
 * The header above every view: title and scope, source, the loss counts,
 * the samples line and the banners.  UI thread.
 *
 * Every fact fits the terminal (80 columns included): a line of facts
 * ("lost 1/2", "memtop cpu 2.0%") breaks between facts, never inside one,
 * and free text (the scope, the source's note) wraps at spaces onto at
 * most TUI_HEADER_WRAP rows, cut with "..." beyond; the help view (h)
 * repeats the scope and the note in full.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "sortkey.h"
#include "tui.h"
#include "ui.h"

#define TUI_HEADER_WRAP	3	/* rows at most for one free text */
#define TUI_FACT_GAP	2	/* spaces between facts */

size_t
tui_wrap_next(const char *s, size_t width)
{
	size_t len = strlen(s), cut;

	if (len <= width || width == 0)
		return len;
	/* The last space that leaves a non-empty row; else a hard cut. */
	for (cut = width; cut > 0 && s[cut] != ' '; cut--)
		;
	return cut ? cut : width;
}

/*
 * Draws s from (y, x) at most first_w columns wide on the first row and
 * COLS - x on the next ones, breaking at spaces; returns the rows used.
 */
static int
tui_header_wrap(int y, int x, int first_w, int attr, const char *s)
{
	int rows = 0, w = first_w;

	while (*s && rows < TUI_HEADER_WRAP && w > 0) {
		size_t n = tui_wrap_next(s, (size_t)w);
		bool last = rows == TUI_HEADER_WRAP - 1 && s[n] != '\0';

		if (last && w > 3)
			n = (size_t)w - 3;
		attron(attr);
		tui_draw_safe(y + rows, x, (int)n, s);
		attroff(attr);
		if (last)
			tui_draw_text(y + rows, x + (int)n, attr, "...");
		s += n;
		while (*s == ' ')
			s++;
		rows++;
		w = COLS - x;
	}
	return rows ? rows : 1;
}

/* A line of facts, laid out left to right and broken between facts. */
struct tui_facts {
	int y, x, attr;
};

static void
tui_fact(struct tui_facts *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
tui_fact(struct tui_facts *fs, const char *fmt, ...)
{
	char fact[256];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(fact, sizeof(fact), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (fs->x > 0 && fs->x + TUI_FACT_GAP + len > COLS) {
		fs->y++;
		fs->x = 0;
	} else if (fs->x > 0) {
		fs->x += TUI_FACT_GAP;
	}
	if (len > COLS) {
		/* A fact wider than the terminal: wrapped as text. */
		fs->y += tui_header_wrap(fs->y, 0, COLS, fs->attr, fact) - 1;
		fs->x = COLS;
		return;
	}
	tui_draw_text(fs->y, fs->x, fs->attr, "%s", fact);
	fs->x += len;
}

/* The row after the last fact. */
static int
tui_facts_end(const struct tui_facts *fs)
{
	return fs->y + 1;
}
static void
tui_draw_banners(const struct tui *t, int y)
{
	const struct frame *f = t->cur;
	int banner = tui_draw_attr(t, TUI_COLOR_BANNER, A_REVERSE | A_BOLD);
	int x = 0;

	move(y, 0);
	attron(banner);
	if (f->paused) {
		addstr(" PAUSED ");
		x += 9;
	}
	if (f->error) {
		move(y, x);
		addstr(" error: ");
		tui_draw_safe(y, x + 8, COLS - x - 20, f->error);
		addstr(" ");
		addstr(t->glyphs->dash);
		addstr(" press q ");
	} else if (f->final) {
		move(y, x);
		addstr(" target exited ");
		addstr(t->glyphs->dash);
		addstr(" press q ");
	}
	attroff(banner);
}

/*
 * The source's note, wrapped; the faults source says first what its
 * samples are, unless the collector's note already does.  Returns the
 * rows used.
 */
static int
tui_draw_source_note(const struct tui *t, int y)
{
	/* A fault is a first touch, a copy-on-write or a refault: the
	 * counts say where memory was faulted in, not how hot it is. */
	static const char faults_note[] = "samples are page faults (first "
		"touch, COW, refault), not access frequency";
	const struct frame *f = t->cur;
	char note[1024];

	/* The collector's own note already says it (or, with --rearm, what
	 * the faults mean then): show that one, bold. */
	if (f->source_note &&
	    (strstr(f->source_note, "not access frequency") ||
	     strstr(f->source_note, "first write per page")))
		return tui_header_wrap(y, 0, COLS, A_BOLD, f->source_note);
	if (strcmp(f->source, "faults") != 0)
		return tui_header_wrap(y, 0, COLS, 0, f->source_note);
	snprintf(note, sizeof(note), "%s%s%s", faults_note,
		 f->source_note ? "; " : "",
		 f->source_note ? f->source_note : "");
	return tui_header_wrap(y, 0, COLS, A_BOLD, note);
}

/* The header's samples line: counts, threads (of how many processes, for
 * a whole machine), pages, frames, memtop's own CPU.  Returns the next
 * row. */
static int
tui_draw_header_samples(const struct tui *t, int y)
{
	const struct frame *f = t->cur;
	const struct counts *c = &f->totals, *cum = &f->cumulative;
	uint64_t threads = 0, unwatched = 0;
	struct tui_facts fs = { .y = y };
	char note[48];

	for (size_t i = 0; i < f->n_targets; i++) {
		threads += f->targets[i].threads;
		unwatched += f->targets[i].unwatched;
	}
	if (unwatched)
		snprintf(note, sizeof(note), " (+%" PRIu64 " unwatched)",
			 unwatched);
	else
		note[0] = '\0';
	/* A whole-machine view has no targets: its processes instead. */
	if (!f->n_targets) {
		threads = f->n_threads;
		snprintf(note, sizeof(note), " of %zu processes",
			 f->n_processes);
	}
	fs.attr = unwatched ? tui_draw_attr(t, TUI_COLOR_WARN, A_BOLD) : 0;
	tui_fact(&fs, "samples %" PRIu64 "/%" PRIu64, c->samples,
		 cum->samples);
	tui_fact(&fs, "threads %" PRIu64 "%s", threads, note);
	tui_fact(&fs, "pages tracked %" PRIu64, f->tracked_pages);
	tui_fact(&fs, "frame %" PRIu64, f->seq);
	tui_fact(&fs, "skipped %" PRIu64, t->skipped);
	tui_fact(&fs, "memtop cpu %.1f%%", f->interval > 0 ?
		 (double)f->collector_cpu_ns / 1e7 / f->interval : 0.0);
	return tui_facts_end(&fs);
}

/* The title row: memtop, the scope or target (and whose pages the table
 * shows after Enter in the process view), the elapsed time at the right.
 * Returns the next row. */
static int
tui_draw_title(const struct tui *t, const char *elapsed)
{
	const struct frame *f = t->cur;
	int title = tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD);
	int ew = elapsed ? (int)strlen(elapsed) + 2 : 0;
	char line[400];

	tui_draw_text(0, 0, title, "memtop");
	if (t->pages_pid && f && f->pages_pid == t->pages_pid)
		snprintf(line, sizeof(line), "%s: pages of %d %s (Esc: back)",
			 t->io->target_desc, (int)t->pages_pid, t->pages_comm);
	else if (t->pages_pid)
		/* Asked for; the frame on screen still shows every page. */
		snprintf(line, sizeof(line), "%s: process %d %s from the "
			 "next frame (Esc: back)", t->io->target_desc,
			 (int)t->pages_pid, t->pages_comm);
	else
		snprintf(line, sizeof(line), "%s", t->io->target_desc);
	if (elapsed && COLS > ew)
		tui_draw_text(0, COLS - ew + 2, 0, "%s", elapsed);
	return tui_header_wrap(0, 8, COLS - 8 - ew, 0, line);
}

/* The source row: source and events, period, rate, sort key.  Returns
 * the next row. */
static int
tui_draw_header_source(const struct tui *t, int y)
{
	const struct frame *f = t->cur;
	struct tui_facts fs = { .y = y };
	char buf[32], line[400], set[48] = "";
	size_t len;
	uint64_t rate = f->interval > 0 ?
			(uint64_t)(f->totals.samples / f->interval + 0.5) : 0;

	len = (size_t)snprintf(line, sizeof(line), "source %s (", f->source);
	for (size_t i = 0; i < f->n_events && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s",
					i ? ", " : "", f->events[i]);
	if (len < sizeof(line))
		snprintf(line + len, sizeof(line) - len, ")");
	tui_fact(&fs, "%s", line);
	if (t->period_sent && t->period_sent != f->period)
		snprintf(set, sizeof(set), " (set %" PRIu64 ")",
			 t->period_sent);
	tui_fact(&fs, "period %" PRIu64 "%s", f->period, set);
	tui_fact(&fs, "samples/s %s", tui_draw_count(buf, sizeof(buf), rate));
	set[0] = '\0';
	if (t->sort_sent >= 0 && t->sort_sent != (int)f->sort)
		snprintf(set, sizeof(set), " (set %s)",
			 sortkey_name((enum sort_key)t->sort_sent));
	tui_fact(&fs, "sort %s%s", sortkey_name(f->sort), set);
	return tui_facts_end(&fs);
}

/* The losses row.  Returns the next row. */
static int
tui_draw_header_losses(const struct tui *t, int y)
{
	const struct counts *c = &t->cur->totals, *cum = &t->cur->cumulative;
	struct tui_facts fs = { .y = y };
	struct frame_names_count names[FRAME_NAMES_COUNTS];
	size_t n;

	fs.attr = c->lost || c->throttled || c->untracked ?
		  tui_draw_attr(t, TUI_COLOR_WARN, A_BOLD) : 0;
	tui_fact(&fs, "lost %" PRIu64 "/%" PRIu64, c->lost, cum->lost);
	tui_fact(&fs, "throttled %" PRIu64 "/%" PRIu64, c->throttled,
		 cum->throttled);
	tui_fact(&fs, "unattributed %" PRIu64 "/%" PRIu64, c->unattributed,
		 cum->unattributed);
	tui_fact(&fs, "untracked %" PRIu64 "/%" PRIu64, c->untracked,
		 cum->untracked);
	tui_fact(&fs, "(interval/total)");
	/* Memory or code left unnamed (since start): only when any is, a
	 * fact a count (each fits a row). */
	n = frame_names_counts(t->cur, names);
	for (size_t i = 0; i < n; i++)
		tui_fact(&fs, "%s%s %" PRIu64, i ? "" : "names: ",
			 names[i].what, names[i].n);
	return tui_facts_end(&fs);
}

/* Returns the rows used. */
int
tui_draw_header(const struct tui *t)
{
	const struct frame *f = t->cur;
	char elapsed[32];
	int y;

	if (!f) {
		tui_draw_title(t, NULL);
		tui_draw_text(2, 0, 0, "waiting for the first frame...");
		return 3;
	}
	snprintf(elapsed, sizeof(elapsed), "elapsed %.1fs", f->time);
	y = tui_draw_title(t, elapsed);
	y = tui_draw_header_source(t, y);
	if (f->source_note || strcmp(f->source, "faults") == 0)
		y += tui_draw_source_note(t, y);
	y = tui_draw_header_losses(t, y);
	y = tui_draw_header_samples(t, y);
	if (f->paused || f->final || f->error)
		tui_draw_banners(t, y++);
	return y;
}
