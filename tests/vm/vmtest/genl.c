// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family: status, events, malformed requests,
 * permissions, credentials, dumps.
 */
#include "vmtest.h"

struct genl_find {
	uint32_t id;
	struct hs_status st;
	int found, total;
};

static void genl_find_cb(const struct hs_status *st, void *data)
{
	struct genl_find *f = data;

	f->total++;
	if (st->id == f->id) {
		f->st = *st;
		f->found++;
	}
}

struct genl_attr {
	uint16_t type;		/* the attribute looked for */
	bool found;
	uint32_t value;		/* a u32's */
};

static int genl_attr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genl_attr *a = data;
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) == a->type &&
		    !mnl_attr_validate(attr, MNL_TYPE_U32)) {
			a->found = true;
			a->value = mnl_attr_get_u32(attr);
		}
	}
	return MNL_CB_OK;
}

/*
 * u32 attribute @type of GET of session @id, read here from the message
 * itself (not the tool's parse of it): whether it was there, in *@value.
 */
static bool genl_get_u32(struct hs_genl *g, uint32_t id, uint16_t type, uint32_t *value)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct genl_attr a = { .type = type };
	struct nlmsghdr *nlh;
	int ret;

	nlh = hs_genl_header(g, buf, g->family, NLM_F_ACK, HOTSTACK_CMD_GET,
			     HOTSTACK_GENL_VERSION);
	mnl_attr_put_u32(nlh, HOTSTACK_A_ID, id);
	if (mnl_socket_sendto(g->nl, nlh, nlh->nlmsg_len) < 0)
		return false;
	do {
		ret = mnl_socket_recvfrom(g->nl, buf, sizeof(buf));
		if (ret > 0)
			ret = mnl_cb_run(buf, ret, nlh->nlmsg_seq, g->portid, genl_attr_cb, &a);
	} while (ret > 0);
	*value = a.value;
	return ret == 0 && a.found;
}

/*
 * GET reports exactly what GET_STATS does, for one session and in a dump;
 * the table figures it adds match the tables read through the mmap: the
 * capacity the store's (3/4 of table_entries: what the session may hold
 * of distinct stacks, whatever its CPUs), the fill the fullest table's, of
 * the store and of each CPU's count table (a new stack needs a place in
 * both).
 */
void test_genl_status(void)
{
	struct hotstack_config c;
	struct hotstack_stats st;
	struct genl_find f = { 0 };
	struct hs_genl g;
	struct map m;
	__u64 capacity, samples = 0, timed = 0, handler_ns = 0, hist = 0, truncated = 0;
	unsigned int slot, fill, max_used, cpu_max_used, nr_slots;
	uint32_t cpu_entries = 0;
	char *text, *line, *save;
	double t0, t1;
	int fd = open_dev(), i, drops_ok = 1;

	default_config(&c);
	/* The store of 16 (12 used) fills, with drops; each CPU's 64 (48) do not. */
	c.table_entries = 16;
	c.cpu_entries = 64;
	c.max_depth = 8;	/* some truncated */
	c.keys = HOTSTACK_KEY_CONTEXT;
	max_used = c.table_entries / 4 * 3;
	cpu_max_used = c.cpu_entries / 4 * 3;
	expect_cfg(fd, &c, 0, "netlink status");
	t0 = now_s();
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "netlink status: START");
	fill_table(fd, "netlink status");
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "netlink status: STOP");
	t1 = now_s();
	get_stats(fd, &st, 0);
	if (map_session(fd, &m)) {
		tap(false, "netlink status: mmap the tables");
		close(fd);
		return;
	}
	/* Independent of GET_STATS: the store's and each CPU's counters in the mapping. */
	capacity = max_used;
	fill = gen_store(&m, m.h->active)->stacks * 100 / max_used;
	for (slot = 0; slot < m.h->nr_slots; slot++) {
		const struct hotstack_cpu_stats *cs = slot_stats(&m, m.h->active, slot);
		unsigned int b;

		if (cs->entries * 100 / cpu_max_used > fill)
			fill = cs->entries * 100 / cpu_max_used;
		samples += cs->samples;
		timed += cs->timed;
		handler_ns += cs->handler_ns;
		for (b = 0; b < HOTSTACK_HIST_BUCKETS; b++)
			hist += cs->hist[b];
	}
	nr_slots = m.h->nr_slots;
	munmap(m.base, m.size);
	/* Truncated samples, from read()'s [truncated] lines. */
	text = read_all(fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "[truncated];"))
			truncated += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	free(text);
	if (hs_genl_open(&g)) {
		tap(false, "netlink: resolve the hotstack family");
		close(fd);
		return;
	}
	f.id = st.id;
	tap(hs_genl_status(&g, st.id, genl_find_cb, &f) == 0 && f.found == 1,
	    "netlink: GET of session %u", st.id);
	for (i = 0; i < HOTSTACK_DROP_MAX; i++)
		drops_ok &= f.st.drops[i] == st.total.drops[i];
	tap(f.st.configured && f.st.state == st.state && f.st.samples == st.total.samples &&
	    f.st.counted == st.total.counted && drops_ok && f.st.entries == st.total.entries &&
	    f.st.generation == st.generation && f.st.nr_cpus == st.nr_cpus &&
	    f.st.truncated == st.total.truncated && f.st.nmi_samples == st.total.nmi_samples,
	    "netlink: its counters equal GET_STATS (samples %llu/%llu, counted %llu/%llu)",
	    (unsigned long long)f.st.samples, (unsigned long long)st.total.samples,
	    (unsigned long long)f.st.counted, (unsigned long long)st.total.counted);
	tap(f.st.capacity == capacity && f.st.fill_pct == fill && fill == 100,
	    "netlink: capacity %llu, fill %u%%: the mmap's store and count tables give %llu, %u%% "
	    "(the store full)", (unsigned long long)f.st.capacity, f.st.fill_pct,
	    (unsigned long long)capacity, fill);
	tap(genl_get_u32(&g, st.id, HOTSTACK_A_CPU_ENTRIES, &cpu_entries) &&
	    cpu_entries == st.cpu_entries && cpu_entries == c.cpu_entries,
	    "netlink: HOTSTACK_A_CPU_ENTRIES %u is GET_STATS' cpu_entries (%u)", cpu_entries,
	    st.cpu_entries);
	tap(f.st.owner == (uint32_t)getpid(), "netlink: owner %u is this process", f.st.owner);
	tap(f.st.event_type == c.event_type && f.st.event_config == c.event_config &&
	    f.st.sample == c.sample && f.st.flags == c.flags && f.st.stacks == c.stacks &&
	    f.st.max_depth == c.max_depth && f.st.keys == c.keys &&
	    f.st.table_entries == c.table_entries && f.st.arena_frames == c.arena_frames,
	    "netlink: the configuration attributes are what CONFIGURE was given");
	tap(f.st.cpus_sampled == 0 && f.st.cpus_missed == 0 && f.st.nr_cpus == nr_slots,
	    "netlink: %u CPUs, none sampled after STOP, none missed", f.st.nr_cpus);
	tap(f.st.elapsed_ns > 0 && f.st.elapsed_ns <= (t1 - t0) * 1e9,
	    "netlink: elapsed %.3f s, within the %.3f s between START and STOP",
	    f.st.elapsed_ns / 1e9, t1 - t0);
	tap(timed && hist == timed && f.st.cost_ns == handler_ns / timed,
	    "netlink: cost %llu ns is the mapping's handler_ns / timed (%llu / %llu), the "
	    "histogram holds every timed sample", (unsigned long long)f.st.cost_ns,
	    (unsigned long long)handler_ns, (unsigned long long)timed);
	tap(f.st.overhead_ppm == (unsigned long long)((unsigned __int128)f.st.cost_ns * 1000000 *
						     samples / ((unsigned __int128)f.st.elapsed_ns *
								f.st.nr_cpus)),
	    "netlink: overhead %llu ppm = cost x samples / (elapsed x CPUs)",
	    (unsigned long long)f.st.overhead_ppm);
	tap(truncated > 0 && f.st.truncated == truncated,
	    "netlink: truncated %llu = the counts of read()'s [truncated] lines (%llu)",
	    (unsigned long long)f.st.truncated, (unsigned long long)truncated);
	if (hw_event())
		tap(f.st.samples && f.st.nmi_samples == f.st.samples,
		    "netlink: all %llu samples taken in NMI context", (unsigned long long)f.st.samples);
	memset(&f, 0, sizeof(f));
	f.id = st.id;
	tap(hs_genl_status(&g, 0, genl_find_cb, &f) == 0 && f.found == 1 && f.total >= 1,
	    "netlink: the dump lists the session once (%d sessions)", f.total);
	hs_genl_close(&g);
	close(fd);
}

/*
 * Fill a 16-entry table so that every event fires, once per generation:
 * again after a SNAPSHOT, not again within one. Prints the session ID.
 */
void test_genl_events(void)
{
	struct hotstack_config c;
	struct hotstack_stats st;
	int fd = open_dev();

	default_config(&c);
	c.table_entries = 16;	/* the store fills: fill events, then a TABLE_FULL drop */
	c.cpu_entries = 16;
	expect_cfg(fd, &c, 0, "netlink events");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "netlink events: START");
	fill_table(fd, "netlink events");
	/* More of the same generation: nothing new to say. */
	tap(workload_write(6, 32, 20), "netlink events: more stacks in the full table");
	expect_ioc(fd, HOTSTACK_IOC_SNAPSHOT, NULL, 0, "netlink events: SNAPSHOT");
	fill_table(fd, "netlink events, next generation");
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "netlink events: STOP");
	get_stats(fd, &st, 0);
	printf("# session %u\n", st.id);
	close(fd);
}

static struct nlmsghdr *genl_msg(char *buf, struct hs_genl *g, uint8_t cmd, uint16_t flags)
{
	return hs_genl_header(g, buf, g->family, flags, cmd, HOTSTACK_GENL_VERSION);
}

static void expect_genl(struct hs_genl *g, struct nlmsghdr *nlh, int want, const char *what)
{
	int got = -hs_genl_request(g, nlh);

	tap(got == want && g->error[0], "netlink %s: %s with a message (got %s: \"%s\")", what,
	    strerrorname_np(want), got ? strerrorname_np(got) : "success", g->error);
}

/* Malformed requests: refused with an extended ACK; the socket still works. */
void test_genl_errors(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct genl_find f = { 0 };
	struct hotstack_stats st;
	struct nlmsghdr *nlh;
	struct hs_genl g;
	uint16_t id16 = 1;
	int fd = open_dev();

	get_stats(fd, &st, 0);
	if (hs_genl_open(&g)) {
		tap(false, "netlink: resolve the hotstack family");
		return;
	}
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_GET, 0);
	mnl_attr_put_u32(nlh, HOTSTACK_A_ID, 999999);
	expect_genl(&g, nlh, ENOENT, "GET of a session that does not exist");
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, 200, 1);
	expect_genl(&g, nlh, EINVAL, "GET with an unknown attribute");
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_GET, 0);
	mnl_attr_put(nlh, HOTSTACK_A_ID, sizeof(id16), &id16);
	expect_genl(&g, nlh, EINVAL, "GET with a 2-byte session ID");
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_GET, 0);
	mnl_attr_put_u32(nlh, HOTSTACK_A_STATE, 2);
	expect_genl(&g, nlh, EINVAL, "GET with an attribute it does not take");
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_GET, 0);
	expect_genl(&g, nlh, EINVAL, "GET (do) without a session ID");
	nlh = genl_msg(buf, &g, 99, 0);
	tap(hs_genl_request(&g, nlh) == -EOPNOTSUPP, "netlink: unknown command: EOPNOTSUPP");
	nlh = genl_msg(buf, &g, HOTSTACK_CMD_EVENT, 0);
	tap(hs_genl_request(&g, nlh) == -EOPNOTSUPP, "netlink: EVENT is not a request: EOPNOTSUPP");
	f.id = st.id;
	tap(hs_genl_status(&g, st.id, genl_find_cb, &f) == 0 && f.found == 1 && !f.st.configured,
	    "netlink: after the refused requests, GET of session %u works on the same socket",
	    st.id);
	hs_genl_close(&g);
	close(fd);
}

/*
 * As a member of the module's group (@member) or an outsider: GET is the
 * group's (as /dev/hotstack is); joining the events group takes
 * CAP_SYS_ADMIN, which neither has.
 */
void test_genl_perm(bool member)
{
	struct genl_find f = { 0 };
	struct hs_genl g;
	int ret;

	if (hs_genl_open(&g)) {
		tap(false, "netlink: resolve the hotstack family");
		return;
	}
	ret = hs_genl_status(&g, 0, genl_find_cb, &f);
	if (member)
		tap(ret == 0, "netlink: GET dump as uid %u in the module's group: allowed (%s)",
		    getuid(), ret ? strerror(-ret) : "ok");
	else
		tap(ret == -EPERM && strstr(g.error, "CAP_PERFMON"),
		    "netlink: GET dump as uid %u: EPERM, \"%s\"", getuid(), g.error);
	/* GET of one session: its own (a member may open one), or any. */
	memset(&f, 0, sizeof(f));
	if (member) {
		struct hotstack_stats st;
		int fd = open_dev();

		get_stats(fd, &st, 0);
		f.id = st.id;
		ret = hs_genl_status(&g, st.id, genl_find_cb, &f);
		tap(ret == 0 && f.found == 1, "netlink: GET of session %u by ID as a member", st.id);
		close(fd);
	} else {
		ret = hs_genl_status(&g, 1, genl_find_cb, &f);
		tap(ret == -EPERM, "netlink: GET of session 1 by ID as an outsider: EPERM (%s)",
		    ret ? strerror(-ret) : "allowed");
	}
	ret = hs_genl_subscribe(&g);
	tap(ret == -EPERM, "netlink: joining the events group as uid %u: EPERM (%s)", getuid(),
	    ret ? strerror(-ret) : "joined");
	hs_genl_close(&g);
}

/*
 * The CVE-2014-0181 pattern, both ways: a socket opened by an unprivileged
 * process and handed to root (SCM_RIGHTS), and a socket root opened used
 * by an unprivileged process: GET is refused on both, it takes a socket
 * whose opener and sender are both allowed.
 */
void test_genl_cred(void)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct genl_find f = { 0 };
	struct hs_genl g, mine;
	int sv[2], status, ret;
	uint16_t family = 0;
	pid_t pid;

	if (hs_genl_open(&mine)) {
		tap(false, "netlink: resolve the hotstack family");
		return;
	}
	tap(hs_genl_status(&mine, 0, genl_find_cb, &f) == 0, "netlink: root's own socket: GET");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap(false, "socketpair");
		return;
	}
	pid = fork();
	if (!pid) {
		/* uid 1000, no group: opens a socket and hands it over. */
		if (setgroups(0, NULL) || setgid(1000) || setuid(1000) || hs_genl_open(&g))
			_exit(1);
		iov.iov_base = &g.family;
		iov.iov_len = sizeof(g.family);
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		u.h.cmsg_level = SOL_SOCKET;
		u.h.cmsg_type = SCM_RIGHTS;
		u.h.cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(&u.h) = mnl_socket_get_fd(g.nl);
		_exit(sendmsg(sv[1], &msg, 0) < 0 ? 1 : 0);
	}
	iov.iov_base = &family;
	iov.iov_len = sizeof(family);
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	ret = recvmsg(sv[0], &msg, 0);
	waitpid(pid, &status, 0);
	if (ret <= 0 || !CMSG_FIRSTHDR(&msg) || CMSG_FIRSTHDR(&msg)->cmsg_type != SCM_RIGHTS) {
		tap(false, "netlink: receive uid 1000's socket");
	} else {
		memset(&g, 0, sizeof(g));
		g.nl = mnl_socket_fdopen(*(int *)CMSG_DATA(CMSG_FIRSTHDR(&msg)));
		g.family = family;
		g.portid = g.nl ? mnl_socket_get_portid(g.nl) : 0;
		ret = g.nl ? hs_genl_status(&g, 0, genl_find_cb, &f) : -EBADF;
		tap(ret == -EPERM, "netlink: GET by root on a socket uid 1000 opened: EPERM (%s)",
		    ret ? strerror(-ret) : "allowed");
		hs_genl_close(&g);
	}
	close(sv[0]);
	close(sv[1]);

	pid = fork();
	if (!pid) {
		/* Root's socket, used after dropping to uid 1000. */
		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(2);
		_exit(hs_genl_status(&mine, 0, genl_find_cb, &f) == -EPERM ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	tap(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "netlink: GET by uid 1000 on a socket root opened: EPERM");
	hs_genl_close(&mine);
}

/* delete_module(2) of hotstack, not waiting: 0 or the errno. */
int unload(void)
{
	return syscall(SYS_delete_module, "hotstack", O_NONBLOCK) ? errno : 0;
}

/*
 * A GET dump of many sessions comes in several parts. Sessions that close
 * between two parts flag the later ones NLM_F_DUMP_INTR; and the dump in
 * progress holds the module: rmmod waits until it ends, then works. (The
 * module must be loaded with max_sessions of at least 200.)
 */
void test_genl_dump(void)
{
	static char buf[8192];
	static int fds[200];
	struct hotstack_config c;
	struct nlmsghdr *nlh;
	struct hs_genl g;
	unsigned int i, parts = 0, msgs = 0, intr = 0;
	bool done = false;
	int busy, ret = 0;
	ssize_t n;

	default_config(&c);
	c.table_entries = 16;
	c.arena_frames = 64;
	c.cpu_entries = 16;
	for (i = 0; i < 200; i++) {
		fds[i] = open_dev();
		ret |= xioctl(fds[i], HOTSTACK_IOC_CONFIGURE, &c);
	}
	tap(!ret, "genl dump: 200 sessions configured");
	if (hs_genl_open(&g)) {
		tap(false, "netlink: resolve the hotstack family");
		return;
	}
	nlh = hs_genl_header(&g, buf, g.family, NLM_F_DUMP, HOTSTACK_CMD_GET,
			     HOTSTACK_GENL_VERSION);
	mnl_socket_sendto(g.nl, nlh, nlh->nlmsg_len);
	while (!done && parts < 1000 && (n = recv(mnl_socket_get_fd(g.nl), buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *m = (struct nlmsghdr *)buf;
		int left = n;

		parts++;
		for (; mnl_nlmsg_ok(m, left); m = mnl_nlmsg_next(m, &left)) {
			/* DONE too: it says whether the whole dump was consistent. */
			intr += !!(m->nlmsg_flags & NLM_F_DUMP_INTR);
			if (m->nlmsg_type == NLMSG_DONE || m->nlmsg_type == NLMSG_ERROR) {
				done = m->nlmsg_type == NLMSG_DONE;
				break;
			}
			msgs++;
		}
		if (parts == 1) {
			/* Every session goes: the dump alone holds the module now. */
			for (i = 0; i < 200; i++)
				close(fds[i]);
			busy = unload();
			tap(busy == EAGAIN || busy == EBUSY,
			    "genl dump: rmmod while a dump is in progress is refused (%s)",
			    busy ? strerror(busy) : "it unloaded");
		}
	}
	tap(done && parts >= 2, "genl dump: %u messages in %u parts, then DONE", msgs, parts);
	tap(intr > 0, "genl dump: the parts after the sessions closed are NLM_F_DUMP_INTR (%u)",
	    intr);
	hs_genl_close(&g);
	busy = unload();
	tap(!busy, "genl dump: once it ended, rmmod works (%s)", busy ? strerror(busy) : "ok");
}
