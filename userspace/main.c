// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: entry point (kept apart so unit tests can link the rest). */
#include "commands.h"

int main(int argc, char **argv)
{
	return hs_main(argc, argv);
}
