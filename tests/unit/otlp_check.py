#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The OTLP profiles hotstack writes, read by an independent reader.

Python's protobuf (Debian's python3-protobuf), with the classes of the
same proto files (opentelemetry-proto's, pprof's) compiled by protoc: a
pprof made here (a CPU profile: event, rate, time, the kernel's and a
binary's build IDs, stacks keyed by comm, pid, cgroup and context, drops;
an off-CPU one) goes through `hotstack report -o x.pb.gz` and `-o
x.otlp.pb`, and the OTLP is checked field by field against the pprof of
the same data: totals per stack, labels and attributes, units, period,
time range, mappings and build IDs, the dictionary's zero entries. The
same requests are read again by hand, with the field numbers of
opentelemetry-proto 1.11 written here (wire_stacks()), so that a build
against protos of another layout fails. The agent's --group-by request
(otlp_many: a ResourceProfiles a group, one dictionary) is checked the
same ways. Prints TAP; exits non-zero on a failure.
"""
import gzip
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "userspace", "hotstack")
PPROF_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
OTLP_REQUEST = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"

failed = 0


def tap(ok, what):
    global failed
    print(("ok - " if ok else "not ok - ") + "otlp: " + what)
    if not ok:
        failed += 1
    return ok


def classes(tmp, otel):
    """The message classes of profile.proto and the OTLP profiles service."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    out = os.path.join(tmp, "protos.desc")
    service = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
    subprocess.run(["protoc", "--include_imports", "--descriptor_set_out=" + out,
                    "-I" + otel, "-I" + os.path.dirname(PPROF_PROTO),
                    os.path.join(otel, service), PPROF_PROTO], check=True)
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)

    def cls(name):
        desc = pool.FindMessageTypeByName(name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(desc)
        return message_factory.MessageFactory(pool).GetPrototype(desc)

    return cls("perftools.profiles.Profile"), cls(OTLP_REQUEST)


ID1 = "0123456789abcdef" * 4
POD = "1234abcd-5678-90ab-cdef-1234567890ab"
CGROUP1 = "/system.slice/docker-%s.scope" % ID1
CGROUP2 = ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
           "cri-containerd-%s.scope" % (POD.replace("-", "_"), "fedcba9876543210" * 4))
KERNEL_ID = "00112233445566778899aabbccddeeff00112233"
BASH_ID = "ffeeddccbbaa99887766554433221100ffeeddcc"


def make_pprof(Profile, off_cpu, cycles=False):
    """A pprof as record writes one: frames outermost last, keys as labels.
    With @cycles, of -e cycles -F 99: its period unknown (samples only)."""
    p = Profile()
    strs = {}

    def s(text):
        if text not in strs:
            strs[text] = len(p.string_table)
            p.string_table.append(text)
        return strs[text]

    s("")
    if off_cpu:
        p.sample_type.add(type=s("off_cpu"), unit=s("nanoseconds"))
        p.period_type.type, p.period_type.unit, p.period = s("off_cpu"), s("nanoseconds"), 1
        comments = ["hotstack event: off-cpu", "hotstack rate: every switch"]
    elif cycles:
        p.sample_type.add(type=s("samples"), unit=s("count"))
        p.period_type.type, p.period_type.unit, p.period = s("samples"), s("count"), 1
        comments = ["hotstack event: cycles", "hotstack rate: 99 Hz"]
    else:
        p.sample_type.add(type=s("samples"), unit=s("count"))
        p.sample_type.add(type=s("cpu"), unit=s("nanoseconds"))
        p.period_type.type, p.period_type.unit, p.period = s("cpu"), s("nanoseconds"), 10101010
        comments = ["hotstack event: cpu-clock", "hotstack rate: 99 Hz"]
    comments.append("hotstack seconds: 10.000")
    p.comment.extend(s(c) for c in comments)
    p.time_nanos = 1764553210123456789
    p.duration_nanos = 10000000000
    p.mapping.add(id=1, filename=s("[kernel.kallsyms]"), build_id=s(KERNEL_ID),
                  has_functions=True)
    p.mapping.add(id=2, filename=s("[user]"), has_functions=True)
    p.mapping.add(id=3, filename=s("/usr/bin/bash"), build_id=s(BASH_ID), memory_start=0x5000,
                  memory_limit=0x9000, file_offset=0x1000, has_functions=True)
    locs = {}

    def loc(name, mapping, address=0):
        if name not in locs:
            i = len(locs) + 1
            p.function.add(id=i, name=s(name), system_name=s(name))
            p.location.add(id=i, mapping_id=mapping, address=address).line.add(function_id=i)
            locs[name] = i
        return locs[name]

    def sample(frames, count, labels):
        smp = p.sample.add()
        # Leaf first, as pprof has them.
        smp.location_id.extend(loc(*f) for f in reversed(frames))
        smp.value.append(count)
        if not off_cpu and not cycles:
            smp.value.append(count * p.period)
        for k, v in labels:
            if isinstance(v, int):
                smp.label.add(key=s(k), num=v)
            else:
                smp.label.add(key=s(k), str=s(v))

    syscall = [("entry_SYSCALL_64", 1), ("do_syscall_64", 1), ("ksys_read", 1)]
    sample(syscall, 700, [("comm", "bash"), ("pid", 42), ("cgroup", CGROUP1), ("context", "task")])
    sample(syscall[:2], 300, [("comm", "bash"), ("pid", 42), ("context", "task")])
    sample([("main", 3, 0x5123), ("0x7f0012345678", 2, 0x7f0012345678)], 50,
           [("comm", "bash"), ("pid", 42), ("cgroup", CGROUP2), ("context", "task")])
    sample([("[dropped]", 0), ("[table full]", 0)], 20, [])
    # Another process's the same stack: its own sample, the same stack.
    sample(syscall, 5, [("comm", "cat"), ("pid", 43), ("context", "task")])
    return p


def pprof_stacks(p):
    """{(frames outermost first, sorted labels): count} of a pprof."""
    s = p.string_table
    fn = {f.id: s[f.name] for f in p.function}
    loc = {l.id: fn[l.line[0].function_id] for l in p.location}
    out = {}
    for smp in p.sample:
        frames = tuple(loc[i] for i in reversed(smp.location_id))
        labels = tuple(sorted((s[l.key], s[l.str] if l.str else l.num) for l in smp.label))
        out[(frames, labels)] = out.get((frames, labels), 0) + smp.value[0]
    return out


# OTLP attribute (OpenTelemetry's semantic conventions) -> pprof label, as
# hotstack names them.
ATTR_LABEL = {"thread.name": "comm", "process.pid": "pid", "process.linux.cgroup": "cgroup",
              "container.id": "container.id", "k8s.pod.uid": "k8s.pod.uid",
              "systemd.unit": "systemd.unit", "hotstack.context": "context"}
# The conventions' version hotstack follows, for the resource and the scope.
SCHEMA = "https://opentelemetry.io/schemas/1.34.0"


# The attributes hotstack derives from a sample's cgroup.
DERIVED = ("container.id", "k8s.pod.uid", "systemd.unit")


def attr_value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def otlp_stacks(req, k=0):
    """{(frames outermost first, sorted labels): count} of resource @k's profile."""
    d = req.dictionary
    s = d.string_table
    prof = req.resource_profiles[k].scope_profiles[0].profiles[0]
    out = {}
    for smp in prof.samples:
        locs = d.stack_table[smp.stack_index].location_indices
        # Leaf first: outermost first again.
        frames = tuple(s[d.function_table[d.location_table[i].lines[0].function_index]
                         .name_strindex] for i in reversed(locs))
        labels = []
        for i in smp.attribute_indices:
            a = d.attribute_table[i]
            v = attr_value(a.value)
            # As /proc/PID/cgroup says it: "0::PATH".
            if s[a.key_strindex] == "process.linux.cgroup":
                v = v[3:] if v.startswith("0::") else "?" + v
            labels.append((ATTR_LABEL.get(s[a.key_strindex], "?" + s[a.key_strindex]), v))
        key = (frames, tuple(sorted(labels)))
        out[key] = out.get(key, 0) + smp.values[0]
    return out


def varint(buf, i):
    """The varint at @buf[i]: (its value, the index after it)."""
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return v, i


def wire(buf):
    """Protobuf's wire format, read by hand: [(field, value)], a value an
    int (varint, fixed64) or bytes (length-delimited)."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, kind = key >> 3, key & 7
        if kind == 0:
            v, i = varint(buf, i)
            out.append((field, v))
        elif kind == 1:
            out.append((field, int.from_bytes(buf[i:i + 8], "little")))
            i += 8
        elif kind == 2:
            n, i = varint(buf, i)
            out.append((field, buf[i:i + n]))
            i += n
        elif kind == 5:
            out.append((field, int.from_bytes(buf[i:i + 4], "little")))
            i += 4
        else:
            raise ValueError("wire type %d" % kind)
    return out


def wire_ints(values):
    """A repeated integer field's values, packed (bytes of varints) or not."""
    out = []
    for v in values:
        if not isinstance(v, bytes):
            out.append(v)
            continue
        i = 0
        while i < len(v):
            x, i = varint(v, i)
            out.append(x)
    return out


def wire_stacks(data):
    """wire_stacks_of(@data), or [the reason] when it cannot be read so."""
    try:
        return wire_stacks_of(data)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        return ["cannot be read so: %r" % e]


def wire_stacks_of(data):
    """[{frames outermost first: total}] of each resource's profile, read with
    the field numbers of opentelemetry-proto 1.11 written here, not from the
    protos the build used: a build against another layout fails here."""
    def get(msg, field):
        return [v for f, v in wire(msg) if f == field]

    req = wire(data)
    d = [v for f, v in req if f == 2][0]                          # dictionary
    strs = [v.decode() for v in get(d, 5)]                         # string_table
    fns = [(get(f, 1) or [0])[0] for f in get(d, 3)]               # name_strindex
    locs = [(get((get(l, 3) or [b""])[0], 1) or [0])[0]           # lines[0].function_index
            for l in get(d, 2)]
    stacks = [wire_ints(get(st, 1)) for st in get(d, 7)]          # location_indices
    out = []
    for rp in (v for f, v in req if f == 1):                       # resource_profiles
        totals = {}
        for sp in get(rp, 2):                                      # scope_profiles
            for prof in get(sp, 2):                                # profiles
                for smp in get(prof, 2):                           # samples
                    idx = (get(smp, 1) or [0])[0]                  # stack_index
                    value = wire_ints(get(smp, 4))[0]              # values[0]
                    frames = tuple(strs[fns[locs[i]]] for i in reversed(stacks[idx]))
                    totals[frames] = totals.get(frames, 0) + value
        out.append(totals)
    return out


def frame_totals(stacks):
    """{frames: total} of otlp_stacks()/pprof_stacks()'s {(frames, labels): n}."""
    out = {}
    for (frames, _), n in stacks.items():
        out[frames] = out.get(frames, 0) + n
    return out


def check(Profile, Request, tmp, off_cpu, cycles=False):
    what = "off-CPU" if off_cpu else "cycles at 99 Hz" if cycles else "CPU"
    src = os.path.join(tmp, "in.pb.gz")
    with gzip.open(src, "wb") as f:
        f.write(make_pprof(Profile, off_cpu, cycles).SerializeToString())
    pb, ot = os.path.join(tmp, "out.pb.gz"), os.path.join(tmp, "out.otlp.pb")
    for out in (pb, ot):
        r = subprocess.run([TOOL, "report", src, "-o", out], capture_output=True, text=True)
        if not tap(r.returncode == 0, "%s: hotstack report -o %s (%s)" %
                   (what, os.path.basename(out), r.stderr.strip() or "status 0")):
            return
    p = Profile()
    with gzip.open(pb, "rb") as f:
        p.ParseFromString(f.read())
    req = Request()
    with open(ot, "rb") as f:
        data = f.read()
    try:
        req.ParseFromString(data)
    except Exception as e:  # noqa: BLE001: any decoding error is the failure
        tap(False, "%s: the OTLP request decodes (%s)" % (what, e))
        return
    tap(len(req.resource_profiles) == 1 and len(req.resource_profiles[0].scope_profiles) == 1
        and len(req.resource_profiles[0].scope_profiles[0].profiles) == 1,
        "%s: one resource, one scope, one profile (%d bytes)" % (what, len(data)))
    d = req.dictionary
    s = d.string_table
    prof = req.resource_profiles[0].scope_profiles[0].profiles[0]
    res = {kv.key: attr_value(kv.value) for kv in req.resource_profiles[0].resource.attributes}
    tap(res == {"service.name": "hotstack"}, "%s: the resource: %s" % (what, res))
    rp = req.resource_profiles[0]
    tap(rp.scope_profiles[0].scope.name == "hotstack" and rp.scope_profiles[0].scope.version,
        "%s: the scope is hotstack, version %s" % (what, rp.scope_profiles[0].scope.version))
    tap(rp.schema_url == rp.scope_profiles[0].schema_url == SCHEMA,
        "%s: the resource's and the scope's schema_url: %s, %s" %
        (what, rp.schema_url, rp.scope_profiles[0].schema_url))
    zero = (s[0] == "" and d.mapping_table[0].ByteSize() == 0 and
            d.location_table[0].ByteSize() == 0 and d.function_table[0].ByteSize() == 0 and
            d.stack_table[0].ByteSize() == 0 and d.attribute_table[0].ByteSize() == 0 and
            d.link_table[0].trace_id == bytes(16) and d.link_table[0].span_id == bytes(8))
    tap(zero, "%s: each dictionary table starts with its zero value" % what)
    a, b = pprof_stacks(p), otlp_stacks(req)
    tap(a == b and len(a) == 5, "%s: the same %d stacks with the same totals and labels "
        "(pprof %d samples, OTLP %d)" % (what, len(b), sum(a.values()), sum(b.values())))
    if a != b:
        for k in sorted(set(a) | set(b)):
            print("#   pprof %s, otlp %s: %s" % (a.get(k), b.get(k), k))
    tap(len(prof.samples) == 5 and len(d.stack_table) == 5,
        "%s: a sample a line (%d), a stack a distinct stack (%d)" %
        (what, len(prof.samples), len(d.stack_table) - 1))
    w = wire_stacks(data)
    tap(w == [frame_totals(a)], "%s: read by field numbers (1.11's, not the build's protos): "
        "the same stacks and totals" % what)
    if w != [frame_totals(a)]:
        print("#   by field numbers %s, pprof's %s" % (w, frame_totals(a)))
    st, pt = p.sample_type[0], p.period_type
    tap((s[prof.sample_type.type_strindex], s[prof.sample_type.unit_strindex]) ==
        (p.string_table[st.type], p.string_table[st.unit]),
        "%s: sample type %s/%s as pprof's" % (what, s[prof.sample_type.type_strindex],
                                              s[prof.sample_type.unit_strindex]))
    # Never 0: Pyroscope names the metric by the period's type, and
    # refuses a profile without one (400 "invalid metric name").
    tap((s[prof.period_type.type_strindex], s[prof.period_type.unit_strindex], prof.period) ==
        (p.string_table[pt.type], p.string_table[pt.unit], p.period) and prof.period > 0,
        "%s: period %d %s/%s as pprof's, not 0" % (what, prof.period,
                                                   s[prof.period_type.type_strindex],
                                                   s[prof.period_type.unit_strindex]))
    tap(prof.time_unix_nano == p.time_nanos == 1764553210123456789 and
        prof.duration_nano == p.duration_nanos == 10000000000,
        "%s: time range [%d, +%d ns) as pprof's" % (what, prof.time_unix_nano,
                                                    prof.duration_nano))
    pa = {s[d.attribute_table[i].key_strindex]: attr_value(d.attribute_table[i].value)
          for i in prof.attribute_indices}
    tap(pa.get("hotstack.samples") == 1075 and pa.get("hotstack.dropped") == 20 and
        pa.get("hotstack.event") == ("off-cpu" if off_cpu else "cycles" if cycles else "cpu-clock"),
        "%s: the profile's attributes: %s" % (what, pa))
    # Each frame's mapping, address and build ID, as pprof has them.
    pmap = {m.id: (p.string_table[m.filename], p.string_table[m.build_id], m.memory_start,
                   m.memory_limit, m.file_offset) for m in p.mapping}
    pfr = {p.string_table[f.name]: f.id for f in p.function}
    ploc = {l.line[0].function_id: l for l in p.location}
    bad = []
    for l in list(d.location_table)[1:]:
        name = s[d.function_table[l.lines[0].function_index].name_strindex]
        pl = ploc[pfr[name]]
        m = d.mapping_table[l.mapping_index]
        build = [attr_value(d.attribute_table[i].value) for i in m.attribute_indices
                 if s[d.attribute_table[i].key_strindex] == "process.executable.build_id.gnu"]
        mine = (s[m.filename_strindex], build[0] if build else "", m.memory_start,
                m.memory_limit, m.file_offset) if l.mapping_index else None
        theirs = pmap.get(pl.mapping_id)
        if mine != theirs or l.address != pl.address:
            bad.append((name, mine, theirs, l.address, pl.address))
    tap(not bad and len(d.location_table) == 8,
        "%s: each location's mapping, build ID and address as pprof's (%d locations)%s" %
        (what, len(d.location_table) - 1, "".join("\n#   %s" % (x,) for x in bad)))


def check_many(Profile, Request, tmp):
    """The agent's --group-by request: a ResourceProfiles per group, one dictionary."""
    what = "--group-by"
    whole = make_pprof(Profile, False)
    parts = []
    for i, keep in enumerate(([0, 1], [2, 3, 4])):
        p = Profile()
        p.CopyFrom(whole)
        for j in reversed(range(len(p.sample))):
            if j not in keep:
                del p.sample[j]
        path = os.path.join(tmp, "group%d.pb.gz" % i)
        with gzip.open(path, "wb") as f:
            f.write(p.SerializeToString())
        parts.append((p, path))
    out = os.path.join(tmp, "many.otlp.pb")
    res = ["service.name=hs,container.id=" + ID1, "service.name=hs,k8s.pod.uid=" + POD]
    r = subprocess.run([os.path.join(HERE, "otlp_many"), out, res[0], parts[0][1], res[1],
                        parts[1][1]], capture_output=True, text=True)
    if not tap(r.returncode == 0, "%s: two groups' profiles in one request (%s)" %
               (what, r.stderr.strip() or "status 0")):
        return
    req = Request()
    with open(out, "rb") as f:
        req.ParseFromString(f.read())
    tap(len(req.resource_profiles) == 2 and
        all(len(rp.scope_profiles) == 1 and len(rp.scope_profiles[0].profiles) == 1
            for rp in req.resource_profiles),
        "%s: a ResourceProfiles for each group, one scope and one profile each (%d)" %
        (what, len(req.resource_profiles)))
    if len(req.resource_profiles) != 2:
        return
    got = [{kv.key: attr_value(kv.value) for kv in rp.resource.attributes}
           for rp in req.resource_profiles]
    want = [dict(kv.split("=", 1) for kv in r.split(",")) for r in res]
    tap(got == want, "%s: each its own resource: %s" % (what, got))
    ok = True
    for k, (p, _) in enumerate(parts):
        # The input's labels; the OTLP's, but those derived from the cgroup.
        a = pprof_stacks(p)
        b = {(fr, tuple(l for l in lab if l[0] not in DERIVED)): n
             for (fr, lab), n in otlp_stacks(req, k).items()}
        if a != b or len(a) != 2 + k:
            ok = False
            print("#   group %d: pprof %s, otlp %s" % (k, a, b))
    tap(ok, "%s: each profile has its group's stacks, totals and labels, and no other's" % what)
    d = req.dictionary
    names = [d.string_table[f.name_strindex] for f in list(d.function_table)[1:]]
    with open(out, "rb") as f:
        w = wire_stacks(f.read())
    want = [frame_totals(pprof_stacks(p)) for p, _ in parts]
    tap(w == want, "%s: read by field numbers: each resource's stacks and totals" % what)
    tap(len(d.stack_table) == 5 and len(d.location_table) == 8 and
        len(names) == len(set(names)) == 7,
        "%s: one dictionary: 4 stacks (of 5 samples: one stack in both groups), 7 "
        "functions and locations, each frame once "
        "(%d, %d, %d)" % (what, len(d.stack_table) - 1, len(names), len(d.location_table) - 1))


def main():
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    otel = subprocess.run(["make", "-s", "--no-print-directory", "-C",
                           os.path.join(HERE, "..", "..", "userspace"), "otel-proto"],
                          capture_output=True, text=True, env=env).stdout.strip()
    if not otel:
        tap(False, "opentelemetry-proto 1.11 or newer found for the build (tests/deps.sh "
            "unpacks Debian's)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        Profile, Request = classes(tmp, otel)
        check(Profile, Request, tmp, False)
        check(Profile, Request, tmp, True)
        check(Profile, Request, tmp, False, True)
        check_many(Profile, Request, tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
