// SPDX-License-Identifier: GPL-2.0
/* The UAPI structs have the layout the header documents: no hidden padding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/hotstack.h>

#define FIELD_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))

static void info_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct hotstack_info), HOTSTACK_INFO_SIZE_VER2);
	assert_int_equal(offsetof(struct hotstack_info, size), 0);
	assert_int_equal(offsetof(struct hotstack_info, flags), 4);
	assert_int_equal(offsetof(struct hotstack_info, abi_version), 8);
	assert_int_equal(offsetof(struct hotstack_info, max_sessions), 12);
	assert_int_equal(offsetof(struct hotstack_info, nr_sessions), 16);
	assert_int_equal(offsetof(struct hotstack_info, max_depth), 20);
	assert_int_equal(offsetof(struct hotstack_info, max_memory), 24);
	assert_int_equal(offsetof(struct hotstack_info, features), 32);
	assert_int_equal(offsetof(struct hotstack_info, memory_used), 40);
	assert_int_equal(offsetof(struct hotstack_info, max_freq), 48);
	assert_int_equal(offsetof(struct hotstack_info, pad), 52);
	assert_int_equal(offsetof(struct hotstack_info, reserved), 56);
	assert_int_equal(FIELD_END(struct hotstack_info, reserved), HOTSTACK_INFO_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_info, user_max_sessions), 72);
	assert_int_equal(offsetof(struct hotstack_info, user_sessions), 76);
	assert_int_equal(offsetof(struct hotstack_info, user_max_memory), 80);
	assert_int_equal(offsetof(struct hotstack_info, user_memory_used), 88);
	assert_int_equal(offsetof(struct hotstack_info, user_freq_used), 96);
	assert_int_equal(FIELD_END(struct hotstack_info, pad2), HOTSTACK_INFO_SIZE_VER1);
	assert_int_equal(offsetof(struct hotstack_info, max_unwind), 104);
	assert_int_equal(FIELD_END(struct hotstack_info, unwind_used), sizeof(struct hotstack_info));
	/* Same layout for 32-bit callers: 64-bit fields are naturally aligned. */
	assert_int_equal(offsetof(struct hotstack_info, max_memory) % 8, 0);
}

/* The fields carved from reserved words keep the struct's size and places. */
static void stats_layout(void **state)
{
	size_t total = offsetof(struct hotstack_stats, total);

	(void)state;
	assert_int_equal(sizeof(struct hotstack_stats), HOTSTACK_STATS_SIZE_VER6);
	assert_int_equal(HOTSTACK_STATS_SIZE_VER5, 624);
	assert_int_equal(offsetof(struct hotstack_stats, wakers_unseen), HOTSTACK_STATS_SIZE_VER5);
	assert_int_equal(offsetof(struct hotstack_stats, cpu_entries), HOTSTACK_STATS_SIZE_VER4);
	assert_int_equal(offsetof(struct hotstack_stats, pad4), HOTSTACK_STATS_SIZE_VER4 + 4);
	assert_int_equal(offsetof(struct hotstack_stats, waits_at_start), HOTSTACK_STATS_SIZE_VER3);
	assert_int_equal(offsetof(struct hotstack_stats, uw_walks), HOTSTACK_STATS_SIZE_VER2);
	assert_int_equal(offsetof(struct hotstack_stats, uw_stops), HOTSTACK_STATS_SIZE_VER2 + 40);
	assert_int_equal(offsetof(struct hotstack_stats, uw_tables),
			 HOTSTACK_STATS_SIZE_VER2 + 40 + 8 * HOTSTACK_UWS_MAX);
	assert_int_equal(offsetof(struct hotstack_stats, untimed), HOTSTACK_STATS_SIZE_VER1);
	assert_int_equal(offsetof(struct hotstack_stats, interrupts), HOTSTACK_STATS_SIZE_VER0);
	assert_int_equal(total, 48);
	assert_int_equal(offsetof(struct hotstack_stats, cpus_sampled),
			 total + sizeof(struct hotstack_cpu_stats));
	assert_int_equal(offsetof(struct hotstack_stats, cpus_missed), total + 320 + 4);
	assert_int_equal(offsetof(struct hotstack_stats, table_entries), total + 320 + 8);
	assert_int_equal(offsetof(struct hotstack_stats, pad2), total + 320 + 12);
	assert_int_equal(offsetof(struct hotstack_stats, arena_frames), total + 320 + 16);
	assert_int_equal(offsetof(struct hotstack_stats, lost), total + 320 + 24);
	assert_int_equal(offsetof(struct hotstack_stats, budget_ppm), 408);
	assert_int_equal(offsetof(struct hotstack_stats, floor_ns), 412);
	assert_int_equal(offsetof(struct hotstack_stats, rate_changes), 416);
	assert_int_equal(offsetof(struct hotstack_stats, window_ppm), 440);
	assert_int_equal(offsetof(struct hotstack_stats, max_weight), 448);
	assert_int_equal(FIELD_END(struct hotstack_stats, untimed), HOTSTACK_STATS_SIZE_VER2);
	assert_int_equal(FIELD_END(struct hotstack_stats, waits_at_start), HOTSTACK_STATS_SIZE_VER4);
	assert_int_equal(FIELD_END(struct hotstack_stats, pad4), HOTSTACK_STATS_SIZE_VER5);
	assert_int_equal(FIELD_END(struct hotstack_stats, wakers_unseen), sizeof(struct hotstack_stats));
	assert_int_equal(offsetof(struct hotstack_config, budget_ppm), 72);
	assert_int_equal(offsetof(struct hotstack_config, nr_cgroups), 76);
	assert_int_equal(offsetof(struct hotstack_config, cgroups_ptr), 80);
	assert_int_equal(offsetof(struct hotstack_config, off_cpu_tasks), 88);
	assert_int_equal(offsetof(struct hotstack_config, min_block_us), 92);
	assert_int_equal(offsetof(struct hotstack_config, reserved), 96);
	assert_int_equal(FIELD_END(struct hotstack_config, reserved), HOTSTACK_CONFIG_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_config, unwind_mb), HOTSTACK_CONFIG_SIZE_VER0);
	assert_int_equal(FIELD_END(struct hotstack_config, pad), HOTSTACK_CONFIG_SIZE_VER1);
	assert_int_equal(offsetof(struct hotstack_config, cpu_entries), HOTSTACK_CONFIG_SIZE_VER1);
	assert_int_equal(offsetof(struct hotstack_config, pad2), HOTSTACK_CONFIG_SIZE_VER1 + 4);
	assert_int_equal(sizeof(struct hotstack_config), HOTSTACK_CONFIG_SIZE_VER2);
	assert_int_equal(HOTSTACK_CONFIG_SIZE_VER2, 120);
}

/*
 * mmap version 2: the store's stacks, the CPUs' counts and the header's
 * fields that lay them out, where the header says.
 */
static void mmap_layout(void **state)
{
	(void)state;
	assert_int_equal(HOTSTACK_ABI_VERSION, 2);
	assert_int_equal(HOTSTACK_MMAP_VERSION, 2);
	assert_int_equal(sizeof(struct hotstack_stack), 48);
	assert_int_equal(offsetof(struct hotstack_stack, nr_kernel), 8);
	assert_int_equal(offsetof(struct hotstack_stack, flags), 12);
	assert_int_equal(offsetof(struct hotstack_stack, depth), 14);
	assert_int_equal(offsetof(struct hotstack_stack, tgid), 16);
	assert_int_equal(offsetof(struct hotstack_stack, frames), 20);
	assert_int_equal(offsetof(struct hotstack_stack, comm), 24);
	assert_int_equal(offsetof(struct hotstack_stack, cgroup), 40);
	assert_int_equal(sizeof(struct hotstack_count), 16);
	assert_int_equal(offsetof(struct hotstack_count, tag), 4);
	assert_int_equal(offsetof(struct hotstack_count, count), 8);
	assert_int_equal(sizeof(struct hotstack_store_stats), 64);
	assert_int_equal(offsetof(struct hotstack_store_stats, arena_used), 8);
	/* The state lives in the hash's two low bits. */
	assert_int_equal(HOTSTACK_STACK_STATE, 3);
	assert_int_equal(HOTSTACK_STACK_READY & ~HOTSTACK_STACK_STATE, 0);
	assert_true(HOTSTACK_STACK_READY != HOTSTACK_STACK_FILLING &&
		    HOTSTACK_STACK_FILLING != HOTSTACK_STACK_DEAD &&
		    HOTSTACK_STACK_DEAD != HOTSTACK_STACK_READY);
	assert_int_equal(HOTSTACK_DROP_BUSY, 7);
	assert_true(HOTSTACK_DROP_BUSY < HOTSTACK_DROP_MAX);
	/* ABI 1's header up to window_ppm, then the store's fields. */
	assert_int_equal(offsetof(struct hotstack_mmap_header, window_ppm), 128);
	assert_int_equal(offsetof(struct hotstack_mmap_header, store_size), 136);
	assert_int_equal(offsetof(struct hotstack_mmap_header, store_stats_size), 144);
	assert_int_equal(offsetof(struct hotstack_mmap_header, cpu_entries), 148);
	assert_int_equal(offsetof(struct hotstack_mmap_header, count_size), 152);
	assert_int_equal(offsetof(struct hotstack_mmap_header, reserved), 160);
	assert_int_equal(sizeof(struct hotstack_mmap_header), 176);
	assert_int_equal(offsetof(struct hotstack_mmap_header, slot_cpu), 176);
}

/* The unwind tables' structs: sizes as published, 64-bit fields aligned. */
static void unwind_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct hotstack_unwind_rule), 12);
	assert_int_equal(offsetof(struct hotstack_unwind_rule, cfa_off), 8);
	assert_int_equal(sizeof(struct hotstack_unwind_row), 8);
	assert_int_equal(sizeof(struct hotstack_unwind_map), 32);
	assert_int_equal(offsetof(struct hotstack_unwind_map, table), 24);
	assert_int_equal(sizeof(struct hotstack_unwind_table), HOTSTACK_UNWIND_TABLE_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_unwind_table, rows_ptr), 8);
	assert_int_equal(offsetof(struct hotstack_unwind_table, nr_rows), 24);
	assert_int_equal(offsetof(struct hotstack_unwind_table, id), 32);
	assert_int_equal(offsetof(struct hotstack_unwind_table, bytes), 40);
	assert_int_equal(sizeof(struct hotstack_unwind_maps), HOTSTACK_UNWIND_MAPS_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_unwind_maps, maps_ptr), 16);
	assert_int_equal(sizeof(struct hotstack_unwind_misses), HOTSTACK_UNWIND_MISSES_SIZE_VER0);
	assert_int_equal(sizeof(struct hotstack_cgroup_path), HOTSTACK_CGROUP_PATH_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_unwind_misses, nr), 16);
	assert_int_equal(offsetof(struct hotstack_unwind_misses, lost), 24);
	assert_int_equal(_IOC_NR(HOTSTACK_IOC_ADD_TABLE), 7);
	assert_int_equal(_IOC_NR(HOTSTACK_IOC_SET_MAPS), 8);
	assert_int_equal(_IOC_NR(HOTSTACK_IOC_UNWIND_MISSES), 9);
	assert_int_equal(_IOC_NR(HOTSTACK_IOC_CGROUP_PATH), 10);
}

static void ioctl_numbers(void **state)
{
	(void)state;
	assert_int_equal(_IOC_TYPE(HOTSTACK_IOC_GET_INFO), HOTSTACK_IOC_MAGIC);
	assert_int_equal(_IOC_NR(HOTSTACK_IOC_GET_INFO), 0);
	assert_int_equal(_IOC_DIR(HOTSTACK_IOC_GET_INFO), _IOC_READ | _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(HOTSTACK_IOC_GET_INFO), sizeof(struct hotstack_info));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(info_layout),
		cmocka_unit_test(stats_layout),
		cmocka_unit_test(mmap_layout),
		cmocka_unit_test(unwind_layout),
		cmocka_unit_test(ioctl_numbers),
	};

	return cmocka_run_group_tests_name("uapi", tests, NULL, NULL);
}
