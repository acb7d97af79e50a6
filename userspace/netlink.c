// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the "hotstack" generic netlink family, through libmnl.
 * One callback per nesting level; unknown attributes are skipped, known
 * ones checked; extended ACKs on, and the kernel's message kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "netlink.h"
#include "util.h"

#define HS_BUF_SIZE	(64 * 1024)

struct nlmsghdr *hs_genl_header(struct hs_genl *g, char *buf, uint16_t type, uint16_t flags,
				uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++g->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

/* One request's callbacks: the caller's for data, ours for ACK / DONE. */
struct hs_talk {
	struct hs_genl *g;
	mnl_cb_t cb;
	void *data;
};

static int hs_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hs_talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

/* The extended ACK's message, from the TLVs after @offset bytes of payload. */
static void hs_ack_msg(struct hs_genl *g, const struct nlmsghdr *nlh, unsigned int offset)
{
	const struct nlattr *attr;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(attr, nlh, offset) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(g->error, sizeof(g->error), "%s", mnl_attr_get_str(attr));
	}
}

/* NLMSG_ERROR: an ACK (0) or an error, with the extended ACK's message. */
static int hs_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct hs_talk *t = data;
	unsigned int offset = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += err->msg.nlmsg_len - sizeof(err->msg);
	hs_ack_msg(t->g, nlh, offset);
	if (!err->error)
		return MNL_CB_STOP;
	errno = -err->error;
	return MNL_CB_ERROR;
}

/* NLMSG_DONE of a dump carries the dump's own error and message, if any. */
static int hs_done_cb(const struct nlmsghdr *nlh, void *data)
{
	const int *err = mnl_nlmsg_get_payload(nlh);
	struct hs_talk *t = data;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(int)) && *err < 0) {
		hs_ack_msg(t->g, nlh, sizeof(int));
		errno = -*err;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

static mnl_cb_t hs_ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = hs_error_cb,
	[NLMSG_DONE] = hs_done_cb,
};

/* Send @nlh and run @cb on the answers until the ACK / DONE. 0 or -errno. */
static int hs_genl_talk(struct hs_genl *g, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	struct hs_talk t = { g, cb, data };
	char *buf = malloc(HS_BUF_SIZE);
	int ret = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	g->error[0] = '\0';
	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(g->nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	do {
		n = mnl_socket_recvfrom(g->nl, buf, HS_BUF_SIZE);
		if (n < 0) {
			ret = -errno;
			break;
		}
		ret = mnl_cb_run2(buf, n, nlh->nlmsg_seq, g->portid, hs_data_cb, &t, hs_ctl_cbs,
				  NLMSG_MIN_TYPE);
		if (ret < 0)
			ret = -errno;
	} while (ret == MNL_CB_OK);
	if (ret > 0)
		ret = 0;
out:
	free(buf);
	return ret;
}

int hs_genl_request(struct hs_genl *g, struct nlmsghdr *nlh)
{
	return hs_genl_talk(g, nlh, NULL, NULL);
}

static int hs_mcgrp_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type == CTRL_ATTR_MCAST_GRP_NAME && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		tb[type] = attr;
	if (type == CTRL_ATTR_MCAST_GRP_ID && mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int hs_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hs_genl *g = data;
	const struct nlattr *attr, *grp;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(attr)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
				g->family = mnl_attr_get_u16(attr);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(grp, attr) {
				const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = { NULL };

				mnl_attr_parse_nested(grp, hs_mcgrp_cb, tb);
				if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
				    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
					    HOTSTACK_GENL_MCGRP))
					g->mcgrp = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
			}
			break;
		}
	}
	return MNL_CB_OK;
}

static int hs_genl_do_open(struct hs_genl *g, int verbose)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(g, 0, sizeof(*g));
	g->seq = time(NULL);
	g->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!g->nl || mnl_socket_bind(g->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		if (verbose)
			fprintf(stderr, "hotstack: cannot open a generic netlink socket: %s\n",
				strerror(errno));
		hs_genl_close(g);
		return -1;
	}
	g->portid = mnl_socket_get_portid(g->nl);
	mnl_socket_setsockopt(g->nl, NETLINK_EXT_ACK, &one, sizeof(one));

	nlh = hs_genl_header(g, buf, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, HOTSTACK_GENL_NAME);
	ret = hs_genl_talk(g, nlh, hs_family_cb, g);
	if (!verbose) {
		/* Nothing printed. */
	} else if (ret == -ENOENT) {
		fprintf(stderr, "hotstack: no generic netlink family '%s': the hotstack module "
			"is not loaded: load it with 'modprobe hotstack' or 'insmod hotstack.ko'\n",
			HOTSTACK_GENL_NAME);
	} else if (ret || !g->family) {
		fprintf(stderr, "hotstack: cannot resolve the '%s' netlink family: %s\n",
			HOTSTACK_GENL_NAME, strerror(ret ? -ret : EPROTO));
	}
	if (ret || !g->family) {
		hs_genl_close(g);
		return -1;
	}
	return 0;
}

int hs_genl_open(struct hs_genl *g)
{
	return hs_genl_do_open(g, 1);
}

int hs_genl_quiet_open(struct hs_genl *g)
{
	return hs_genl_do_open(g, 0);
}

void hs_genl_close(struct hs_genl *g)
{
	if (g->nl)
		mnl_socket_close(g->nl);
	g->nl = NULL;
}

static uint64_t hs_u64(const struct nlattr *attr)
{
	return mnl_attr_validate(attr, MNL_TYPE_U64) == 0 ? mnl_attr_get_u64(attr) : 0;
}

static uint32_t hs_u32(const struct nlattr *attr)
{
	return mnl_attr_validate(attr, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(attr) : 0;
}

struct hs_status_list {
	struct hs_status *items;
	size_t nr, cap;
	int intr;		/* NLM_F_DUMP_INTR seen */
};

static int hs_status_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hs_status_list *list = data;
	const struct nlattr *attr, *drop;
	struct hs_status *st;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		list->intr = 1;
	if (hs_grow(&list->items, &list->cap, list->nr, sizeof(*list->items), 16))
		return MNL_CB_ERROR;
	st = &list->items[list->nr++];
	memset(st, 0, sizeof(*st));
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(attr)) {
		case HOTSTACK_A_ID: st->id = hs_u32(attr); break;
		case HOTSTACK_A_OWNER: st->owner = hs_u32(attr); break;
		case HOTSTACK_A_STATE: st->state = hs_u32(attr); break;
		case HOTSTACK_A_EVENT_TYPE: st->event_type = hs_u32(attr); st->configured = true; break;
		case HOTSTACK_A_EVENT_CONFIG: st->event_config = hs_u64(attr); break;
		case HOTSTACK_A_SAMPLE: st->sample = hs_u64(attr); break;
		case HOTSTACK_A_FLAGS: st->flags = hs_u32(attr); break;
		case HOTSTACK_A_STACKS: st->stacks = hs_u32(attr); break;
		case HOTSTACK_A_MAX_DEPTH: st->max_depth = hs_u32(attr); break;
		case HOTSTACK_A_KEYS: st->keys = hs_u32(attr); break;
		case HOTSTACK_A_NR_CPUS: st->nr_cpus = hs_u32(attr); break;
		case HOTSTACK_A_GENERATION: st->generation = hs_u64(attr); break;
		case HOTSTACK_A_ELAPSED_NS: st->elapsed_ns = hs_u64(attr); break;
		case HOTSTACK_A_SAMPLES: st->samples = hs_u64(attr); break;
		case HOTSTACK_A_COUNTED: st->counted = hs_u64(attr); break;
		case HOTSTACK_A_NMI_SAMPLES: st->nmi_samples = hs_u64(attr); break;
		case HOTSTACK_A_TRUNCATED: st->truncated = hs_u64(attr); break;
		case HOTSTACK_A_ENTRIES: st->entries = hs_u64(attr); break;
		case HOTSTACK_A_CAPACITY: st->capacity = hs_u64(attr); break;
		case HOTSTACK_A_FILL_PCT: st->fill_pct = hs_u32(attr); break;
		case HOTSTACK_A_COST_NS: st->cost_ns = hs_u64(attr); break;
		case HOTSTACK_A_OVERHEAD_PPM: st->overhead_ppm = hs_u64(attr); break;
		case HOTSTACK_A_TABLE_ENTRIES: st->table_entries = hs_u32(attr); break;
		case HOTSTACK_A_ARENA_FRAMES: st->arena_frames = hs_u64(attr); break;
		case HOTSTACK_A_CPU_ENTRIES: st->cpu_entries = hs_u32(attr); break;
		case HOTSTACK_A_CPUS_SAMPLED: st->cpus_sampled = hs_u32(attr); break;
		case HOTSTACK_A_CPUS_MISSED: st->cpus_missed = hs_u32(attr); break;
		case HOTSTACK_A_BUDGET_PPM: st->budget_ppm = hs_u32(attr); break;
		case HOTSTACK_A_SAMPLE_RATE: st->sample_rate = hs_u64(attr); break;
		case HOTSTACK_A_WINDOW_PPM: st->window_ppm = hs_u64(attr); break;
		case HOTSTACK_A_RATE_CHANGES: st->rate_changes = hs_u64(attr); break;
		case HOTSTACK_A_WEIGHT: st->weight = hs_u32(attr); break;
		case HOTSTACK_A_UW_BYTES: st->uw_bytes = hs_u64(attr); break;
		case HOTSTACK_A_UW_WALKS: st->uw_walks = hs_u64(attr); break;
		case HOTSTACK_A_UW_COMPLETE: st->uw_complete = hs_u64(attr); break;
		case HOTSTACK_A_MEMORY: st->memory = hs_u64(attr); break;
		case HOTSTACK_A_DROPS:
			mnl_attr_for_each_nested(drop, attr) {
				unsigned int reason = mnl_attr_get_type(drop) - 1;

				if (reason < HOTSTACK_DROP_MAX)
					st->drops[reason] = hs_u64(drop);
			}
			break;
		}
	}
	return MNL_CB_OK;
}

int hs_genl_status(struct hs_genl *g, uint32_t id,
		   void (*cb)(const struct hs_status *, void *), void *data)
{
	struct hs_status_list list = { 0 };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret, tries = 0;
	size_t i;

	/* A dump that raced with a session opening or closing is redone. */
	do {
		list.nr = 0;
		list.intr = 0;
		nlh = hs_genl_header(g, buf, g->family, id ? 0 : NLM_F_DUMP, HOTSTACK_CMD_GET,
				     HOTSTACK_GENL_VERSION);
		if (id)
			mnl_attr_put_u32(nlh, HOTSTACK_A_ID, id);
		ret = hs_genl_talk(g, nlh, hs_status_cb, &list);
	} while (!ret && list.intr && ++tries < 3);
	for (i = 0; !ret && i < list.nr; i++)
		cb(&list.items[i], data);
	free(list.items);
	return ret;
}

struct hs_watch {
	void (*cb)(const struct hs_event *, void *);
	void *data;
};

static int hs_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	struct hs_watch *w = data;
	const struct nlattr *attr;
	struct hs_event ev = { .cpu = -1 };

	if (genl->cmd != HOTSTACK_CMD_EVENT)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*genl)) {
		switch (mnl_attr_get_type(attr)) {
		case HOTSTACK_A_ID: ev.id = hs_u32(attr); break;
		case HOTSTACK_A_EVENT: ev.event = hs_u32(attr); break;
		case HOTSTACK_A_EVENT_VALUE: ev.value = hs_u64(attr); break;
		case HOTSTACK_A_CPU: ev.cpu = hs_u32(attr); break;
		case HOTSTACK_A_SUPPRESSED: ev.suppressed = hs_u64(attr); break;
		}
	}
	w->cb(&ev, w->data);
	return MNL_CB_OK;
}

int hs_genl_subscribe(struct hs_genl *g)
{
	if (!g->mcgrp)
		return -ENOENT;
	if (mnl_socket_setsockopt(g->nl, NETLINK_ADD_MEMBERSHIP, &g->mcgrp, sizeof(g->mcgrp)))
		return -errno;
	return 0;
}

static int hs_genl_recv_events(struct hs_genl *g, void (*cb)(const struct hs_event *, void *),
			       void *data, int flags)
{
	struct hs_watch w = { cb, data };
	char *buf = malloc(HS_BUF_SIZE);
	ssize_t n;
	int ret;

	if (!buf)
		return -ENOMEM;
	n = recv(mnl_socket_get_fd(g->nl), buf, HS_BUF_SIZE, flags);
	if (n < 0) {
		ret = errno == EAGAIN ? 0 : -errno;
	} else {
		ret = mnl_cb_run(buf, n, 0, 0, hs_event_cb, &w) < 0 ? -errno : (int)n;
	}
	free(buf);
	return ret;
}

int hs_genl_read_events(struct hs_genl *g, void (*cb)(const struct hs_event *, void *),
			void *data)
{
	return hs_genl_recv_events(g, cb, data, 0);
}

int hs_genl_read_events_nowait(struct hs_genl *g, void (*cb)(const struct hs_event *, void *),
			       void *data)
{
	return hs_genl_recv_events(g, cb, data, MSG_DONTWAIT);
}

int hs_genl_watch(struct hs_genl *g, void (*cb)(const struct hs_event *, void *), void *data,
		  volatile int *stop)
{
	int ret = 0;

	while (!ret && !*stop) {
		ret = hs_genl_read_events(g, cb, data);
		if (ret == -EINTR) {
			ret = 0;
		} else if (ret == -ENOBUFS) {
			fprintf(stderr, "hotstack: events were lost (socket buffer full)\n");
			ret = 0;
		} else if (ret > 0) {
			ret = 0;
		}
	}
	/* Stopped: what already arrived is still printed. */
	while (!ret && hs_genl_read_events_nowait(g, cb, data) > 0)
		;
	return ret;
}
