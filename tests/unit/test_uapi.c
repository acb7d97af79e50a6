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
	assert_int_equal(sizeof(struct hotstack_info), HOTSTACK_INFO_SIZE_VER1);
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
	assert_int_equal(FIELD_END(struct hotstack_info, pad2), sizeof(struct hotstack_info));
	/* Same layout for 32-bit callers: 64-bit fields are naturally aligned. */
	assert_int_equal(offsetof(struct hotstack_info, max_memory) % 8, 0);
}

/* The fields carved from reserved words keep the struct's size and places. */
static void stats_layout(void **state)
{
	size_t total = offsetof(struct hotstack_stats, total);

	(void)state;
	assert_int_equal(sizeof(struct hotstack_stats), HOTSTACK_STATS_SIZE_VER2);
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
	assert_int_equal(FIELD_END(struct hotstack_stats, untimed), sizeof(struct hotstack_stats));
	assert_int_equal(offsetof(struct hotstack_config, budget_ppm), 72);
	assert_int_equal(offsetof(struct hotstack_config, nr_cgroups), 76);
	assert_int_equal(offsetof(struct hotstack_config, cgroups_ptr), 80);
	assert_int_equal(offsetof(struct hotstack_config, off_cpu_tasks), 88);
	assert_int_equal(offsetof(struct hotstack_config, min_block_us), 92);
	assert_int_equal(offsetof(struct hotstack_config, reserved), 96);
	assert_int_equal(sizeof(struct hotstack_config), HOTSTACK_CONFIG_SIZE_VER0);
	assert_int_equal(sizeof(struct hotstack_mmap_header), 152);
	assert_int_equal(sizeof(struct hotstack_entry), 56);
	assert_int_equal(offsetof(struct hotstack_entry, cgroup), 48);
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
		cmocka_unit_test(ioctl_numbers),
	};

	return cmocka_run_group_tests_name("uapi", tests, NULL, NULL);
}
