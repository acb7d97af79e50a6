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
	assert_int_equal(sizeof(struct hotstack_info), HOTSTACK_INFO_SIZE_VER0);
	assert_int_equal(offsetof(struct hotstack_info, size), 0);
	assert_int_equal(offsetof(struct hotstack_info, flags), 4);
	assert_int_equal(offsetof(struct hotstack_info, abi_version), 8);
	assert_int_equal(offsetof(struct hotstack_info, max_sessions), 12);
	assert_int_equal(offsetof(struct hotstack_info, nr_sessions), 16);
	assert_int_equal(offsetof(struct hotstack_info, max_depth), 20);
	assert_int_equal(offsetof(struct hotstack_info, max_memory), 24);
	assert_int_equal(offsetof(struct hotstack_info, features), 32);
	assert_int_equal(offsetof(struct hotstack_info, reserved), 40);
	assert_int_equal(FIELD_END(struct hotstack_info, reserved), sizeof(struct hotstack_info));
	/* Same layout for 32-bit callers: 64-bit fields are naturally aligned. */
	assert_int_equal(offsetof(struct hotstack_info, max_memory) % 8, 0);
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
		cmocka_unit_test(ioctl_numbers),
	};

	return cmocka_run_group_tests_name("uapi", tests, NULL, NULL);
}
