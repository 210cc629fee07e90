#!/bin/sh
# capture.sh: run one real-VRPN scenario on 127.0.0.1 and record it (see pcaps/vrpn/README.md).
#
# Needs: root (tcpdump on lo), tcpdump, and sender/receiver built by build.sh (in $VRPN_BUILD/bin).
# Does: in a scratch directory holding vrpn_Tracker.cfg (the tracker's To_Room, Workspace and Unit_To_Sensor
# values, read by mainline's vrpn_Tracker constructor), starts `tcpdump -i lo -U -w OUT.pcap 'tcp port PORT'`,
# then `sender PORT KINDS`, then `receiver PORT KINDS 1` (extra receiver arguments, e.g. -login/-logout log
# files, are passed on), waits for both, stops tcpdump, and writes OUT.pcap, OUT.server.jsonl (sender's
# stdout), OUT.client.jsonl (receiver's stdout) and their stderr files (OUT.*.stderr.txt). For the kind
# "aux" it also starts, uncaptured, a second sender on PORT+100: the connection the auxiliary logger logs.
# A port needs a minute after use before mainline can bind it again (no SO_REUSEADDR): use a fresh one.
#
# usage: [RECV_SECONDS=S] capture.sh OUT PORT KINDS [SENDER_ARGS --] [RECEIVER_ARGS...]
#   RECV_SECONDS: how long the receiver keeps serving after its requests (default 1)
#   e.g. capture.sh pcaps/vrpn/text_tracker 3901 text,tracker
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${VRPN_BUILD:-/work/vrpnbuild}
out=$(realpath -m "$1")
port=$2
kinds=$3
shift 3
sargs=""
case " $* " in
*" -- "*)
	while [ "$1" != "--" ]; do sargs="$sargs $1"; shift; done
	shift
	;;
esac
work=$(mktemp -d)
cp "$here/vrpn_Tracker.cfg" "$work/"
cd "$work"
tcpdump -i lo -U -w "$out.pcap" "tcp port $port" 2>"$work/tcpdump.err" &
tdpid=$!
sleep 1.5
case ",$kinds," in
*,aux,*) # the connection the auxiliary logger logs: a second server, not captured
	"$B/bin/sender" $((port + 100)) tracker >"$work/aux_target.out" 2>&1 &
	;;
esac
"$B/bin/sender" "$port" "$kinds" $sargs >"$out.server.jsonl" 2>"$out.server.stderr.txt" &
spid=$!
sleep 0.5
"$B/bin/receiver" "$port" "$kinds" "${RECV_SECONDS:-1}" "$@" >"$out.client.jsonl" 2>"$out.client.stderr.txt" ||
	echo "capture.sh: receiver exited with status $?" >&2
wait $spid || echo "capture.sh: sender exited with status $?" >&2
sleep 1
kill -INT $tdpid
wait $tdpid || true
cat "$work/tcpdump.err" >&2
# mainline prints a few notices on stdout (e.g. "vrpn: TCP connection request received."): keep only the JSON
# lines in the truth files and move the rest to the stderr files.
for side in server client; do
	mv "$out.$side.jsonl" "$work/$side.out"
	grep '^{' "$work/$side.out" >"$out.$side.jsonl" || true
	grep -v '^{' "$work/$side.out" >>"$out.$side.stderr.txt" || true
done
rm -rf "$work"
