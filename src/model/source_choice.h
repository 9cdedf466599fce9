/* Which sampling source the user asked for (-e).  Pure data: the command
 * line sets it, collector/sources/ builds the events for it. */
#ifndef MEMTOP_SOURCE_CHOICE_H
#define MEMTOP_SOURCE_CHOICE_H

enum source_choice {
	SOURCE_AUTO = 0,
	SOURCE_PEBS,
	SOURCE_IBS,
	SOURCE_FAULTS,
	SOURCE_DAMON,
};

#endif
