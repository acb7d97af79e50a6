// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: generic netlink family "hotstack" -- session status (GET) and
 * the "events" multicast group. Nothing here runs in NMI: the sample path
 * raises events with hotstack_raise(), which defers through irq_work and a
 * workqueue to hotstack_events_work().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/pid_namespace.h>
#include <linux/ratelimit.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "cost.h"
#include "hotstack.h"

/* Every session, for GET; hotstack_sessions_gen changes with the list. */
static LIST_HEAD(hotstack_sessions);
static DEFINE_MUTEX(hotstack_sessions_lock);
static unsigned int hotstack_sessions_gen;
static atomic_t hotstack_next_id = ATOMIC_INIT(0);

/* At most event_rate events a second in all; the others are counted, not sent. */
static struct ratelimit_state hotstack_ev_rs;
static atomic64_t hotstack_ev_suppressed = ATOMIC64_INIT(0);

/* Fill levels of HOTSTACK_EV_TABLE_FILL, one event bit each. */
const u8 hotstack_fill_pct[HS_FILL_STEPS] = { 50, 75, 90, 100 };

static const struct nla_policy hotstack_get_policy[HOTSTACK_A_MAX + 1] = {
	[HOTSTACK_A_ID] = { .type = NLA_U32 },
};

static struct genl_family hotstack_genl_family;

void hotstack_session_register(struct hotstack_session *s)
{
	s->id = atomic_inc_return(&hotstack_next_id);
	mutex_lock(&hotstack_sessions_lock);
	list_add_tail(&s->node, &hotstack_sessions);
	hotstack_sessions_gen++;
	mutex_unlock(&hotstack_sessions_lock);
}

void hotstack_session_unregister(struct hotstack_session *s)
{
	mutex_lock(&hotstack_sessions_lock);
	list_del(&s->node);
	hotstack_sessions_gen++;
	mutex_unlock(&hotstack_sessions_lock);
}

/**
 * hotstack_raise - note event @bit of session @s, once per generation
 * @s: the session
 * @gen: the generation (0/1) the sampler writes
 * @bit: HS_EV_FILL + step, HS_EV_THROTTLE or HS_EV_DROP + reason
 * @cpu: the CPU it happened on
 *
 * Called from NMI or hardirq context: defers the message to a workqueue.
 * Each generation has its own bits, cleared while it is quiet (SNAPSHOT,
 * RESET), so a sampler still in the old one cannot re-arm the new one.
 */
void hotstack_raise(struct hotstack_session *s, unsigned int gen, unsigned int bit,
		    unsigned int cpu)
{
	if (test_bit(bit, &s->ev_raised[gen]) || test_and_set_bit(bit, &s->ev_raised[gen]))
		return;
	WRITE_ONCE(s->ev_cpu[bit], cpu);
	set_bit(bit, &s->ev_pending);
	irq_work_queue(&s->ev_irq_work);
}

static void hotstack_ev_irq_work(struct irq_work *work)
{
	struct hotstack_session *s = container_of(work, struct hotstack_session, ev_irq_work);

	schedule_work(&s->ev_work);
}

/* Multicast one event of @s. Process context. */
void hotstack_event(struct hotstack_session *s, u32 event, u64 value, int cpu)
{
	struct sk_buff *skb;
	u64 suppressed;
	void *hdr;

	if (!__ratelimit(&hotstack_ev_rs)) {
		atomic64_inc(&hotstack_ev_suppressed);
		return;
	}
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &hotstack_genl_family, 0, HOTSTACK_CMD_EVENT);
	if (!hdr)
		goto out_free;
	suppressed = atomic64_xchg(&hotstack_ev_suppressed, 0);
	if (nla_put_u32(skb, HOTSTACK_A_ID, s->id) ||
	    nla_put_u32(skb, HOTSTACK_A_EVENT, event) ||
	    nla_put_u64_64bit(skb, HOTSTACK_A_EVENT_VALUE, value, HOTSTACK_A_PAD) ||
	    (cpu >= 0 && nla_put_u32(skb, HOTSTACK_A_CPU, cpu)) ||
	    (suppressed && nla_put_u64_64bit(skb, HOTSTACK_A_SUPPRESSED, suppressed,
					     HOTSTACK_A_PAD))) {
		atomic64_add(suppressed, &hotstack_ev_suppressed);
		goto out_free;
	}
	genlmsg_end(skb, hdr);
	/* -ESRCH: nobody listens, which is fine. */
	genlmsg_multicast(&hotstack_genl_family, skb, 0, 0, GFP_KERNEL);
	return;

out_free:
	nlmsg_free(skb);
}

static void hotstack_events_work(struct work_struct *work)
{
	struct hotstack_session *s = container_of(work, struct hotstack_session, ev_work);
	unsigned long pending = xchg(&s->ev_pending, 0);
	unsigned int bit;

	for_each_set_bit(bit, &pending, HS_EV_BITS) {
		int cpu = READ_ONCE(s->ev_cpu[bit]);

		if (bit < HS_EV_FILL + HS_FILL_STEPS)
			hotstack_event(s, HOTSTACK_EV_TABLE_FILL,
				       hotstack_fill_pct[bit - HS_EV_FILL], cpu);
		else if (bit == HS_EV_THROTTLE)
			hotstack_event(s, HOTSTACK_EV_THROTTLED, 0, cpu);
		else
			hotstack_event(s, HOTSTACK_EV_DROP, bit - HS_EV_DROP, cpu);
	}
}

void hotstack_events_init(struct hotstack_session *s)
{
	/*
	 * In hard interrupt context even on PREEMPT_RT, where others go to a
	 * per-CPU thread that parks while its CPU is offline: flushing one
	 * queued there would wait until the CPU came back.
	 */
	s->ev_irq_work = IRQ_WORK_INIT_HARD(hotstack_ev_irq_work);
	INIT_WORK(&s->ev_work, hotstack_events_work);
}

/* Deliver what the sampler raised; no sampler may be running. */
void hotstack_events_flush(struct hotstack_session *s)
{
	irq_work_sync(&s->ev_irq_work);
	flush_work(&s->ev_work);
}

static int hotstack_put_u64(struct sk_buff *skb, int attr, u64 value)
{
	return nla_put_u64_64bit(skb, attr, value, HOTSTACK_A_PAD);
}

/* The session's configuration and counters; @s locked and configured. */
static int hotstack_put_stats(struct sk_buff *skb, struct hotstack_session *s)
{
	const struct hotstack_config *c = &s->cfg;
	struct hotstack_stats st;
	struct nlattr *drops;
	u64 cost = 0, overhead, capacity = 0;
	unsigned int i, fill = 0;

	hotstack_get_stats(s, &st, s->active);
	/* The store's fill, or a CPU's count table's where that is fuller. */
	if (s->tabs.nr_slots) {
		capacity = s->tabs.store[s->active].max_used;
		fill = div_u64(st.total.entries * 100, capacity);
	}
	for (i = 0; i < s->tabs.nr_slots; i++) {
		const struct hs_table *t = &s->tabs.slots[i].tab[s->active];

		fill = max_t(unsigned int, fill,
			     div_u64(READ_ONCE(t->stats->entries) * 100, t->max_used));
	}
	if (st.total.timed)
		cost = div64_u64(st.total.handler_ns, st.total.timed);
	/* Of the handler's runs: a budget's weighted samples are fewer. */
	overhead = hs_overhead_ppm(cost, st.interrupts, st.elapsed_ns, st.nr_cpus);

	if (nla_put_u32(skb, HOTSTACK_A_EVENT_TYPE, c->event_type) ||
	    hotstack_put_u64(skb, HOTSTACK_A_EVENT_CONFIG, c->event_config) ||
	    hotstack_put_u64(skb, HOTSTACK_A_SAMPLE, c->sample) ||
	    nla_put_u32(skb, HOTSTACK_A_FLAGS, c->flags) ||
	    nla_put_u32(skb, HOTSTACK_A_STACKS, c->stacks) ||
	    nla_put_u32(skb, HOTSTACK_A_MAX_DEPTH, c->max_depth) ||
	    nla_put_u32(skb, HOTSTACK_A_KEYS, c->keys) ||
	    nla_put_u32(skb, HOTSTACK_A_NR_CPUS, st.nr_cpus) ||
	    hotstack_put_u64(skb, HOTSTACK_A_GENERATION, st.generation) ||
	    hotstack_put_u64(skb, HOTSTACK_A_ELAPSED_NS, st.elapsed_ns) ||
	    hotstack_put_u64(skb, HOTSTACK_A_SAMPLES, st.total.samples) ||
	    hotstack_put_u64(skb, HOTSTACK_A_COUNTED, st.total.counted) ||
	    hotstack_put_u64(skb, HOTSTACK_A_NMI_SAMPLES, st.total.nmi_samples) ||
	    hotstack_put_u64(skb, HOTSTACK_A_TRUNCATED, st.total.truncated) ||
	    hotstack_put_u64(skb, HOTSTACK_A_ENTRIES, st.total.entries) ||
	    hotstack_put_u64(skb, HOTSTACK_A_CAPACITY, capacity) ||
	    nla_put_u32(skb, HOTSTACK_A_FILL_PCT, fill) ||
	    nla_put_u32(skb, HOTSTACK_A_TABLE_ENTRIES, c->table_entries) ||
	    hotstack_put_u64(skb, HOTSTACK_A_ARENA_FRAMES, c->arena_frames) ||
	    nla_put_u32(skb, HOTSTACK_A_CPUS_SAMPLED, st.cpus_sampled) ||
	    nla_put_u32(skb, HOTSTACK_A_CPUS_MISSED, st.cpus_missed) ||
	    hotstack_put_u64(skb, HOTSTACK_A_COST_NS, cost) ||
	    hotstack_put_u64(skb, HOTSTACK_A_OVERHEAD_PPM, overhead) ||
	    nla_put_u32(skb, HOTSTACK_A_BUDGET_PPM, c->budget_ppm) ||
	    hotstack_put_u64(skb, HOTSTACK_A_MEMORY, hs_tables_bytes(&s->tabs)) ||
	    nla_put_u32(skb, HOTSTACK_A_CPU_ENTRIES, c->cpu_entries))
		return -EMSGSIZE;
	if (c->budget_ppm &&
	    (hotstack_put_u64(skb, HOTSTACK_A_SAMPLE_RATE, st.sample_rate) ||
	     hotstack_put_u64(skb, HOTSTACK_A_WINDOW_PPM, st.window_ppm) ||
	     hotstack_put_u64(skb, HOTSTACK_A_RATE_CHANGES, st.rate_changes) ||
	     nla_put_u32(skb, HOTSTACK_A_WEIGHT, st.max_weight)))
		return -EMSGSIZE;
	if ((c->flags & HOTSTACK_CFG_USER_TABLES) &&
	    (hotstack_put_u64(skb, HOTSTACK_A_UW_BYTES, st.uw_bytes) ||
	     hotstack_put_u64(skb, HOTSTACK_A_UW_WALKS, st.uw_walks) ||
	     hotstack_put_u64(skb, HOTSTACK_A_UW_COMPLETE, st.uw_complete)))
		return -EMSGSIZE;
	drops = nla_nest_start(skb, HOTSTACK_A_DROPS);
	if (!drops)
		return -EMSGSIZE;
	for (i = 0; i < HOTSTACK_DROP_MAX; i++)
		if (hotstack_put_u64(skb, i + 1, st.total.drops[i]))
			return -EMSGSIZE;
	nla_nest_end(skb, drops);
	return 0;
}

static int hotstack_put_session(struct sk_buff *skb, struct hotstack_session *s,
				u32 portid, u32 seq, int flags, struct netlink_callback *cb)
{
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &hotstack_genl_family, flags, HOTSTACK_CMD_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	mutex_lock(&s->lock);
	/* The opener as the requester's pid namespace numbers it (0: not in it). */
	ret = nla_put_u32(skb, HOTSTACK_A_ID, s->id) ||
	      nla_put_u32(skb, HOTSTACK_A_OWNER, pid_vnr(s->owner)) ||
	      nla_put_u32(skb, HOTSTACK_A_STATE, s->state) ? -EMSGSIZE : 0;
	if (!ret && s->state != HOTSTACK_STATE_NEW)
		ret = hotstack_put_stats(skb, s);
	mutex_unlock(&s->lock);
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * Whether the request in @skb may read the sessions: both the process that
 * opened the socket and the one sending on it must be allowed to open
 * /dev/hotstack (CAP_PERFMON or the module's group), as netlink_capable()
 * asks of both: a privileged process writing to a socket an unprivileged
 * one opened (or the reverse) gets nothing.
 */
static int hotstack_genl_perm(const struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	const struct socket *sock = NETLINK_CB(skb).sk->sk_socket;
	const struct file *file = sock ? sock->file : NULL;

	if (file && hotstack_may_open() && hotstack_file_may_open(file))
		return 0;
	NL_SET_ERR_MSG(extack, "hotstack: needs CAP_PERFMON or the module's group");
	return -EPERM;
}

static int hotstack_get_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct hotstack_session *s;
	long idx = 0, start = cb->args[0];
	int ret;

	/* Here, not in .start: 6.1 gives .start no extack for the message. */
	ret = hotstack_genl_perm(cb->skb, cb->extack);
	if (ret)
		return ret;

	mutex_lock(&hotstack_sessions_lock);
	cb->seq = hotstack_sessions_gen;
	list_for_each_entry(s, &hotstack_sessions, node) {
		if (idx++ < start)
			continue;
		if (hotstack_put_session(skb, s, NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI, cb))
			break;
		cb->args[0] = idx;
	}
	mutex_unlock(&hotstack_sessions_lock);
	return skb->len;
}

static int hotstack_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct hotstack_session *s;
	struct sk_buff *msg;
	int ret = -ENOENT;
	u32 id;

	ret = hotstack_genl_perm(skb, info->extack);
	if (ret)
		return ret;
	if (GENL_REQ_ATTR_CHECK(info, HOTSTACK_A_ID)) {
		NL_SET_ERR_MSG(info->extack, "hotstack: GET without a dump needs HOTSTACK_A_ID");
		return -EINVAL;
	}
	id = nla_get_u32(info->attrs[HOTSTACK_A_ID]);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = -ENOENT;
	mutex_lock(&hotstack_sessions_lock);
	list_for_each_entry(s, &hotstack_sessions, node) {
		if (s->id == id) {
			ret = hotstack_put_session(msg, s, info->snd_portid, info->snd_seq, 0,
						   NULL);
			break;
		}
	}
	mutex_unlock(&hotstack_sessions_lock);
	if (ret) {
		if (ret == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[HOTSTACK_A_ID],
					    "hotstack: no session with this ID");
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static const struct genl_ops hotstack_genl_ops[] = {
	{
		.cmd = HOTSTACK_CMD_GET,
		.dumpit = hotstack_get_dump,
		.doit = hotstack_get_doit,
		.policy = hotstack_get_policy,
		.maxattr = HOTSTACK_A_MAX,
	},
};

/*
 * Joining the events group is checked by genetlink itself, at the join:
 * it can ask for CAP_SYS_ADMIN (in the network namespace's user
 * namespace), not for the module's group, so watching events takes more
 * than reading the sessions with GET.
 */
static const struct genl_multicast_group hotstack_genl_mcgrps[] = {
	{ .name = HOTSTACK_GENL_MCGRP, .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

static struct genl_family hotstack_genl_family __ro_after_init = {
	.name = HOTSTACK_GENL_NAME,
	.version = HOTSTACK_GENL_VERSION,
	.maxattr = HOTSTACK_A_MAX,
	.module = THIS_MODULE,
	.ops = hotstack_genl_ops,
	.n_ops = ARRAY_SIZE(hotstack_genl_ops),
	.mcgrps = hotstack_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(hotstack_genl_mcgrps),
};

int __init hotstack_genl_init(unsigned int event_rate)
{
	ratelimit_state_init(&hotstack_ev_rs, HZ, event_rate);
	/* Suppressed events are counted in the next one sent, not logged. */
	ratelimit_set_flags(&hotstack_ev_rs, RATELIMIT_MSG_ON_RELEASE);
	return genl_register_family(&hotstack_genl_family);
}

void hotstack_genl_exit(void)
{
	genl_unregister_family(&hotstack_genl_family);
}
