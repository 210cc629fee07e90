#!/usr/bin/python3
"""Fill a dissect Parquet lake from many captures on a Dask cluster.

    python3 scale/dask_ingest.py --lake DIR [--scheduler tcp://HOST:8786 | --workers N]
        [--dissect PATH] CAPTURE... [-- DISSECT_FLAGS]

Each capture is one task: `dissect -o parquet --out DIR --part-id ID
DISSECT_FLAGS -- CAPTURE` on a worker, where ID is derived from the
capture's base name and content (SHA-256), so the capture's parts are named
part-ID-<n>.parquet. A task that the cluster retries (its worker died), or
a rerun over the same capture, writes the same names again: each part is
written as .inprogress and renamed over the old one, and parts of the ID
that the new run did not rewrite (an earlier run with other flags or
another dissect made more parts) are removed once the run has succeeded.
Re-ingesting a capture therefore leaves the lake as one ingestion leaves
it. A capture whose dissect fails is reported by name with dissect's
error (the last line of its stderr), its parts are removed (a truncated
capture's records up to the damage are not kept), the other captures land,
and the exit status is 1.

The lake and the captures must be at the same paths on every worker (a
shared file system on a multi-machine cluster), and so must dissect (or
on every worker's PATH). With --workers N (default: one per CPU) the
cluster is a LocalCluster on this machine. Needs Debian's
python3-distributed (or `pip install distributed`); docs/scale.md.
"""

import argparse
import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys

ID_HEX = 32  # hex digits of the SHA-256 in a part id: 128 bits


def capture_id(path):
    """Return the part id of a capture: SHA-256 over its base name, a NUL
    and its content. The base name is in because it is the lake's capture
    column: the same bytes under two names are two sets of rows."""
    h = hashlib.sha256()
    h.update(os.path.basename(path).encode("utf-8", "surrogateescape"))
    h.update(b"\0")
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()[:ID_HEX]


def find_parts(lake, pid):
    """Return the files of part id pid in the lake (proto=*/type=*/), as
    (path, finished) with finished False for an .inprogress file."""
    pat = re.compile(r"part-" + re.escape(pid) + r"-[0-9]+\.parquet(\.inprogress)?\Z")
    out = []
    try:
        protos = [e for e in os.scandir(lake) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return out
    for p in protos:
        for t in os.scandir(p.path):
            if not t.is_dir(follow_symlinks=False):
                continue
            for f in os.scandir(t.path):
                m = pat.match(f.name)
                if m:
                    out.append((f.path, m.group(1) is None))
    return out


def remove_parts(lake, pid):
    """Remove every file of part id pid from the lake; return how many."""
    n = 0
    for path, _ in find_parts(lake, pid):
        try:
            os.remove(path)
            n += 1
        except FileNotFoundError:
            pass
    return n


def hash_task(path):
    """Phase 1 on a worker: the capture's part id, or its error."""
    try:
        return {"capture": path, "id": capture_id(path)}
    except OSError as e:
        return {"capture": path, "error": "%s: %s" % (path, e.strerror or e)}


def ingest_task(path, pid, lake, dissect, flags):
    """Phase 2 on a worker: dissect one capture into the lake under part
    id pid, replacing what an earlier run of the same id left."""
    # A killed attempt's .inprogress files would make dissect's exclusive
    # create fail; the finished parts are remembered by inode, so that those
    # this run does not replace can be told apart afterwards.
    before = {}
    for p, finished in find_parts(lake, pid):
        if not finished:
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
            continue
        try:
            st = os.stat(p)
            before[p] = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            pass
    cmd = [dissect, "-o", "parquet", "--out", lake, "--part-id", pid,
           "--no-summary", "--progress", "never"] + list(flags) + ["--", path]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    except OSError as e:
        remove_parts(lake, pid)
        return {"capture": path, "error": "%s: %s" % (dissect, e.strerror or e)}
    if r.returncode != 0:
        lines = [l for l in r.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
        err = lines[-1] if lines else "dissect exited with status %d" % r.returncode
        remove_parts(lake, pid)
        return {"capture": path, "error": err, "status": r.returncode}
    stale = 0
    for p, ident in before.items():
        try:
            st = os.stat(p)
        except FileNotFoundError:
            continue
        if (st.st_dev, st.st_ino) == ident:  # not rewritten by this run
            os.remove(p)
            stale += 1
    parts = sum(1 for _, finished in find_parts(lake, pid) if finished)
    return {"capture": path, "id": pid, "parts": parts, "stale": stale}


def parse_args(argv):
    flags = []
    if "--" in argv:
        i = argv.index("--")
        argv, flags = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(
        prog="dask_ingest.py",
        description="Map dissect over capture files on a Dask cluster into one Parquet lake "
                    "(docs/scale.md). Flags after -- go to dissect.",
        usage="%(prog)s --lake DIR [--scheduler tcp://HOST:8786 | --workers N] "
              "[--dissect PATH] CAPTURE... [-- DISSECT_FLAGS]")
    ap.add_argument("--lake", required=True, metavar="DIR", help="the lake's directory (shared by the workers)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDR", help="address of a running Dask scheduler, tcp://HOST:8786")
    g.add_argument("--workers", type=int, metavar="N", help="start a LocalCluster of N workers (default: one per CPU)")
    ap.add_argument("--dissect", default="dissect", metavar="PATH",
                    help="the dissect program on the workers (default: dissect on their PATH)")
    ap.add_argument("captures", nargs="+", metavar="CAPTURE")
    a = ap.parse_args(argv)
    if a.workers is not None and a.workers < 1:
        ap.error("--workers %d: want at least 1" % a.workers)
    a.flags = flags
    return a


def main(argv):
    a = parse_args(argv)
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        print("dask_ingest: cannot import distributed (%s): apt-get install python3-distributed "
              "and run with /usr/bin/python3, or pip install distributed" % e, file=sys.stderr)
        return 2
    lake = os.path.abspath(a.lake)
    captures = [os.path.abspath(c) for c in a.captures]
    dissect = a.dissect
    if os.sep in dissect:
        dissect = os.path.abspath(dissect)
    if a.scheduler is None:  # a local cluster sees this machine's files: check early
        if shutil.which(dissect) is None:
            print("dask_ingest: %s: not found (give --dissect PATH)" % dissect, file=sys.stderr)
            return 2
        dissect = shutil.which(dissect)
    os.makedirs(lake, exist_ok=True)

    cluster = None
    if a.scheduler is not None:
        client = Client(a.scheduler)
    else:
        # Workers as threads of this process: the work is done by the
        # dissect processes they start, and worker processes would only
        # add their start-up (about 5 s for two on a loaded 2-core machine).
        cluster = LocalCluster(n_workers=a.workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=False, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster)
    try:
        return run(client, lake, captures, dissect, a.flags)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run(client, lake, captures, dissect, flags):
    failed = []  # (capture, error)

    # Phase 1: the part id of each capture, read where the task runs.
    ids = {}  # id -> first capture with it
    todo = []
    for fut, c in zip(client.map(hash_task, captures, pure=False), captures):
        try:
            r = fut.result()
        except Exception as e:  # the task itself failed (KilledWorker, ...)
            r = {"capture": c, "error": "%s: %s" % (type(e).__name__, e)}
        if "error" in r:
            failed.append((c, r["error"]))
        elif r["id"] in ids:
            print("dask_ingest: %s: same name and content as %s, ingested once" % (c, ids[r["id"]]),
                  file=sys.stderr)
        else:
            ids[r["id"]] = c
            todo.append((c, r["id"]))

    # Phase 2: dissect each capture into the lake.
    futs = client.map(ingest_task, [c for c, _ in todo], [i for _, i in todo],
                      lake=lake, dissect=dissect, flags=flags, pure=False)
    done = 0
    for fut, (c, pid) in zip(futs, todo):
        try:
            r = fut.result()
        except Exception as e:  # retries exhausted: remove what it may have left
            r = {"capture": c, "error": "%s: %s" % (type(e).__name__, e)}
            try:
                client.submit(remove_parts, lake, pid, pure=False).result()
            except Exception as e2:
                r["error"] += " (its parts part-%s-* may be left in the lake: %s)" % (pid, e2)
        if "error" in r:
            failed.append((c, r["error"]))
            continue
        done += 1
        note = ", %d stale parts of an earlier run removed" % r["stale"] if r["stale"] else ""
        print("%s: %d parts, id %s%s" % (c, r["parts"], pid, note), flush=True)

    for c, err in failed:
        print("dask_ingest: FAILED %s: %s" % (c, err), file=sys.stderr)
    print("dask_ingest: %d of %d captures in %s%s" % (
        done, len(captures), lake, ", %d failed" % len(failed) if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
