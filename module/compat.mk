# SPDX-License-Identifier: GPL-2.0
#
# Features of the target kernel seen in its headers, for module/compat.h:
# a header that exists or not, or a name a header declares. Probes find distribution backports that
# version numbers miss, and work where the compiler or sparse has no
# __has_include. Included by the Kbuild of the module and of tests/kmod.
hs_header = $(if $(wildcard $(srctree)/$(1)),-D$(2))
hs_declares = $(if $(shell grep -qsw '$(2)' $(srctree)/$(1) && echo y),-D$(3))
ccflags-y += $(call hs_header,include/linux/unaligned.h,HS_HAVE_LINUX_UNALIGNED_H) \
	     $(call hs_header,include/linux/sched/exec_state.h,HS_HAVE_EXEC_STATE) \
	     $(call hs_header,arch/arm64/include/asm/stacktrace/frame.h,HS_HAVE_FRAME_META) \
	     $(call hs_declares,include/linux/sched.h,sched_delayed,HS_HAVE_SCHED_DELAYED)
