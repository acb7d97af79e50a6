// SPDX-License-Identifier: GPL-2.0
/*
 * A program on a pseudo-terminal (hotstack top's screens).
 */
#include "vmtest.h"

/*
 * What a vt100 of PTY_ROWS x PTY_COLS shows: enough of one to follow what
 * ncurses sends it (cursor motion, erasing, scroll regions, autowrap);
 * attributes, modes and character sets are ignored.
 */
#define PTY_ROWS	40
#define PTY_COLS	100

struct vt {
	char cell[PTY_ROWS][PTY_COLS];
	int y, x, sy, sx;
	int top, bot;		/* scroll region, rows inclusive */
	int wrap;		/* at the last column: the next character wraps */
	int state;		/* 0 text, 1 after ESC, 2 in CSI, 3 skip one byte */
	int par[8], npar;
	FILE *raw;		/* every byte, control characters made visible */
};

static void vt_clear(struct vt *vt, int y0, int x0, int y1, int x1)
{
	int y;

	for (y = y0; y <= y1; y++)
		memset(&vt->cell[y][y == y0 ? x0 : 0], ' ',
		       (y == y1 ? x1 + 1 : PTY_COLS) - (y == y0 ? x0 : 0));
}

/* Scroll the region up (@up) or down by one line. */
static void vt_scroll(struct vt *vt, int up)
{
	int n = vt->bot - vt->top;

	if (up)
		memmove(vt->cell[vt->top], vt->cell[vt->top + 1], n * PTY_COLS);
	else
		memmove(vt->cell[vt->top + 1], vt->cell[vt->top], n * PTY_COLS);
	vt_clear(vt, up ? vt->bot : vt->top, 0, up ? vt->bot : vt->top, PTY_COLS - 1);
}

static void vt_index(struct vt *vt)
{
	if (vt->y == vt->bot)
		vt_scroll(vt, 1);
	else if (vt->y < PTY_ROWS - 1)
		vt->y++;
}

static int vt_clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void vt_csi(struct vt *vt, unsigned char c)
{
	int p0 = vt->par[0], p1 = vt->par[1], n = p0 ? p0 : 1;

	switch (c) {
	case 'H':
	case 'f':
		vt->y = vt_clamp(p0 - 1, 0, PTY_ROWS - 1);
		vt->x = vt_clamp(p1 - 1, 0, PTY_COLS - 1);
		break;
	case 'A':
		vt->y = vt_clamp(vt->y - n, 0, PTY_ROWS - 1);
		break;
	case 'B':
		vt->y = vt_clamp(vt->y + n, 0, PTY_ROWS - 1);
		break;
	case 'C':
		vt->x = vt_clamp(vt->x + n, 0, PTY_COLS - 1);
		break;
	case 'D':
		vt->x = vt_clamp(vt->x - n, 0, PTY_COLS - 1);
		break;
	case 'K':
		if (p0 == 0)
			vt_clear(vt, vt->y, vt->x, vt->y, PTY_COLS - 1);
		else
			vt_clear(vt, vt->y, 0, vt->y, p0 == 1 ? vt->x : PTY_COLS - 1);
		break;
	case 'J':
		if (p0 == 0)
			vt_clear(vt, vt->y, vt->x, PTY_ROWS - 1, PTY_COLS - 1);
		else if (p0 == 1)
			vt_clear(vt, 0, 0, vt->y, vt->x);
		else
			vt_clear(vt, 0, 0, PTY_ROWS - 1, PTY_COLS - 1);
		break;
	case 'r':
		vt->top = vt_clamp(p0 - 1, 0, PTY_ROWS - 1);
		vt->bot = p1 ? vt_clamp(p1 - 1, 0, PTY_ROWS - 1) : PTY_ROWS - 1;
		if (vt->bot <= vt->top) {
			vt->top = 0;
			vt->bot = PTY_ROWS - 1;
		}
		vt->y = vt->x = 0;
		break;
	default:		/* attributes, modes */
		return;
	}
	vt->wrap = 0;
}

static void vt_put(struct vt *vt, unsigned char c)
{
	if (c == 0x1b)
		fputs("\\E", vt->raw);
	else if (c == '\n')
		fputs("^J\n", vt->raw);
	else if (c < 0x20 || c == 0x7f)
		fprintf(vt->raw, "^%c", c ^ 0x40);
	else
		putc(c, vt->raw);

	switch (vt->state) {
	case 1:
		vt->state = 0;
		if (c == '[') {
			memset(vt->par, 0, sizeof(vt->par));
			vt->npar = 0;
			vt->state = 2;
		} else if (c == 'D' || c == 'E') {
			if (c == 'E')
				vt->x = 0;
			vt_index(vt);
		} else if (c == 'M') {
			if (vt->y == vt->top)
				vt_scroll(vt, 0);
			else if (vt->y > 0)
				vt->y--;
		} else if (c == '7') {
			vt->sy = vt->y;
			vt->sx = vt->x;
		} else if (c == '8') {
			vt->y = vt->sy;
			vt->x = vt->sx;
		} else if (c == 'c') {
			vt_clear(vt, 0, 0, PTY_ROWS - 1, PTY_COLS - 1);
			vt->y = vt->x = vt->top = 0;
			vt->bot = PTY_ROWS - 1;
		} else if (c >= '(' && c <= '+') {
			vt->state = 3;	/* a character set designation */
		}
		vt->wrap = 0;
		return;
	case 2:
		if (c >= '0' && c <= '9')
			vt->par[vt->npar] = vt->par[vt->npar] * 10 + c - '0';
		else if (c == ';' && vt->npar < 7)
			vt->npar++;
		else if (c >= 0x40 && c <= 0x7e) {
			vt->state = 0;
			vt_csi(vt, c);
		}
		return;
	case 3:
		vt->state = 0;
		return;
	}
	switch (c) {
	case 0x1b:
		vt->state = 1;
		return;
	case '\r':
		vt->x = 0;
		break;
	case '\n':
	case '\v':
	case '\f':
		vt_index(vt);
		break;
	case '\b':
		if (vt->x > 0)
			vt->x--;
		break;
	case '\t':
		vt->x = vt_clamp((vt->x | 7) + 1, 0, PTY_COLS - 1);
		break;
	default:
		if (c < 0x20 || c == 0x7f)
			return;		/* NUL padding, BEL, SO/SI */
		if (vt->wrap) {
			vt->x = 0;
			vt_index(vt);
		}
		vt->cell[vt->y][vt->x] = c;
		if (vt->x < PTY_COLS - 1)
			vt->x++;
		else
			vt->wrap = 1;
		return;
	}
	vt->wrap = 0;
}

/* "--- screen N: WHAT, tty [-]icanon [-]echo", then its rows. */
static void vt_print(struct vt *vt, int n, const char *what, int master)
{
	struct termios t;
	int y, len;

	printf("--- screen %d: %s", n, what);
	if (!tcgetattr(master, &t))
		printf(", tty %sicanon %secho", t.c_lflag & ICANON ? "" : "-",
		       t.c_lflag & ECHO ? "" : "-");
	putchar('\n');
	for (y = 0; y < PTY_ROWS; y++) {
		for (len = PTY_COLS; len > 0 && vt->cell[y][len - 1] == ' '; len--)
			;
		printf("%.*s\n", len, vt->cell[y]);
	}
	fflush(stdout);
}

/*
 * Show the screen what @pid writes on @master until @until (or its first
 * bytes, if @first), or until it exited and everything it wrote was read
 * (at most 2 s more, should a child of its hold the terminal): then 1,
 * with its wait status.
 */
static int pty_read(struct vt *vt, int master, pid_t pid, double until, int first,
		    int *status)
{
	struct pollfd pfd = { .fd = master, .events = POLLIN };
	unsigned char buf[4096];
	int hangup = 0, exited = 0;
	double left;
	ssize_t i, n;

	for (;;) {
		if (!exited && waitpid(pid, status, WNOHANG) == pid) {
			exited = 1;
			until = now_s() + 2;
		}
		left = until - now_s();
		/* Gone, and the master reads EIO: every byte it wrote was read. */
		if ((exited && hangup) || left <= 0)
			return exited;
		if (hangup) {
			poll(NULL, 0, 10);
			continue;
		}
		if (poll(&pfd, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(master, buf, sizeof(buf));
		if (n <= 0) {
			hangup = n == 0 || errno != EINTR;
			continue;
		}
		for (i = 0; i < n; i++)
			vt_put(vt, buf[i]);
		if (first)
			return 0;
	}
}

/*
 * hs_vmtest pty SECONDS KEYS RAW -- CMD ARGS...: CMD on a new pseudo-terminal
 * of PTY_COLS x PTY_ROWS (its controlling terminal, standard input, output
 * and error; TERM=vt100); SECONDS after its first output (or after 30 s
 * without any) each byte of KEYS ("^C" is Ctrl-C) is typed, a second
 * apart; then CMD has 10 s to exit. Prints the
 * screen after SECONDS, after each key and at the exit, each with the
 * terminal's modes; writes every byte CMD wrote to RAW, with ESC as "\E"
 * and other control characters as "^X". Exits with CMD's status (128+N
 * for signal N), or kills it and exits 124 if it did not exit in time.
 */
/*
 * Read until CMD has written something and then nothing for @quiet s (a
 * whole screen drawn: ncurses writes a refresh at once), at most until
 * @until. Returns whether CMD exited.
 */
static int pty_settle(struct vt *vt, int master, pid_t pid, double until, double quiet,
		      int *status)
{
	int exited = pty_read(vt, master, pid, until, 1, status);

	while (!exited && now_s() < until) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };

		if (poll(&pfd, 1, quiet * 1000) <= 0)
			break;
		exited = pty_read(vt, master, pid, until, 1, status);
	}
	return exited;
}

int pty_run(double seconds, const char *keys, const char *raw, char **cmd)
{
	struct winsize ws = { .ws_row = PTY_ROWS, .ws_col = PTY_COLS };
	struct vt vt = { .bot = PTY_ROWS - 1 };
	int master, slave, status = 0, n = 0, exited = 0;
	char what[64];
	unsigned char key;
	pid_t pid;

	vt_clear(&vt, 0, 0, PTY_ROWS - 1, PTY_COLS - 1);
	vt.raw = fopen(raw, "w");
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (!vt.raw || master < 0 || grantpt(master) || unlockpt(master) ||
	    ioctl(master, TIOCSWINSZ, &ws)) {
		fprintf(stderr, "hs_vmtest pty: %s: %s\n", vt.raw ? "/dev/ptmx" : raw,
			strerror(errno));
		return 2;
	}
	/* Open before the fork: CMD never runs without the terminal. */
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (slave < 0) {
		fprintf(stderr, "hs_vmtest pty: %s: %s\n", ptsname(master), strerror(errno));
		return 2;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("hs_vmtest pty: fork");
		return 2;
	}
	if (!pid) {
		if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) || dup2(slave, 0) < 0 ||
		    dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
			_exit(127);
		if (slave > 2)
			close(slave);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		setenv("TERM", "vt100", 1);
		unsetenv("LINES");
		unsetenv("COLUMNS");
		execvp(cmd[0], cmd);
		fprintf(stderr, "hs_vmtest pty: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(slave);

	exited = pty_read(&vt, master, pid, now_s() + 30, 1, &status);
	if (!exited)
		exited = pty_read(&vt, master, pid, now_s() + seconds, 0, &status);
	snprintf(what, sizeof(what), "%g s after its first output", seconds);
	vt_print(&vt, n++, what, master);
	for (; *keys && !exited; keys++) {
		key = *keys;
		if (key == '^' && keys[1])
			key = *++keys & 0x1f;
		if (write(master, &key, 1) != 1)
			perror("hs_vmtest pty: write");
		/* Until the screen it answers with is drawn (at most 20 s). */
		exited = pty_settle(&vt, master, pid, now_s() + 20, 0.3, &status);
		snprintf(what, sizeof(what), "after key %s%c", key < 0x20 ? "^" : "",
			 key < 0x20 ? key | 0x40 : key);
		vt_print(&vt, n++, what, master);
	}
	if (!exited)
		exited = pty_read(&vt, master, pid, now_s() + 10, 0, &status);
	if (!exited) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		vt_print(&vt, n, "timed out: killed after 10 s", master);
		status = 124;
	} else {
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		snprintf(what, sizeof(what), "at the exit, status %d", status);
		vt_print(&vt, n, what, master);
	}
	fclose(vt.raw);
	close(master);
	return status;
}
