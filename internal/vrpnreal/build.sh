#!/bin/sh
# build.sh: build mainline VRPN (github.com/vrpn/vrpn, commit 893c7496) outside this repository and the two
# small programs of this directory (sender.C, receiver.C) against it. They make the real captures and logs
# in pcaps/vrpn/ (see pcaps/vrpn/README.md and capture.sh).
#
# Needs: g++, make, cmake (Debian: apt-get install -y cmake g++ make), and the VRPN source, by default taken
# from the bare mirror /work/.mirror/vrpn+vrpn/repo (any checkout of the same commit works: set VRPN_SRC to
# it). Git submodules (hidapi, jsoncpp) are not needed: everything that uses them is turned off.
#
# Does: exports the source to $VRPN_BUILD/src (unless VRPN_SRC is given), configures a Release build with
# every optional dependency off (HID, Python, Java, jsoncpp, libusb, ...), builds with -j2 only the libraries
# vrpn (client) and vrpnserver (client+server) and the programs vrpn_server and vrpn_print_devices, then
# compiles sender and receiver into $VRPN_BUILD/bin. Nothing is written inside the repository.
#
# Usage: internal/vrpnreal/build.sh            (VRPN_BUILD defaults to /work/vrpnbuild)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${VRPN_BUILD:-/work/vrpnbuild}
MIRROR=${VRPN_MIRROR:-/work/.mirror/vrpn+vrpn/repo}
mkdir -p "$B/bin"
if [ -z "${VRPN_SRC:-}" ]; then
	VRPN_SRC=$B/src
	if [ ! -f "$VRPN_SRC/vrpn_Connection.C" ]; then
		mkdir -p "$VRPN_SRC"
		git -C "$MIRROR" archive HEAD | tar -x -C "$VRPN_SRC"
	fi
fi
if [ ! -f "$B/build/CMakeCache.txt" ]; then
	cmake -S "$VRPN_SRC" -B "$B/build" -DCMAKE_BUILD_TYPE=Release \
		-DVRPN_USE_HID=OFF -DVRPN_USE_LOCAL_HIDAPI=OFF -DVRPN_BUILD_HID_GUI=OFF \
		-DVRPN_USE_LOCAL_JSONCPP=OFF -DVRPN_USE_JSONNET=OFF -DVRPN_USE_LIBUSB_1_0=OFF \
		-DVRPN_BUILD_PYTHON=OFF -DVRPN_BUILD_PYTHON_HANDCODED_2X=OFF -DVRPN_BUILD_PYTHON_HANDCODED_3X=OFF \
		-DVRPN_BUILD_JAVA=OFF -DVRPN_USE_LIBNIFALCON=OFF -DVRPN_USE_MODBUS=OFF -DVRPN_USE_WIIUSE=OFF \
		-DVRPN_USE_FREESPACE=OFF -DVRPN_USE_I2CDEV=OFF -DVRPN_USE_DEV_INPUT=OFF -DVRPN_USE_JOYLIN=OFF \
		-DVRPN_USE_GPM_MOUSE=OFF -DVRPN_USE_MPI=OFF -DVRPN_USE_HDAPI=OFF -DVRPN_USE_PHANTOM_SERVER=OFF \
		-DVRPN_BUILD_TEST_RPC_GENERATION=OFF -DVRPN_GPL_SERVER=OFF -DVRPN_BUILD_EXTRA_COMPILER_WARNINGS=OFF
fi
cmake --build "$B/build" -j2 --target vrpn vrpnserver vrpn_server vrpn_print_devices
cp "$B/build/server_src/vrpn_server" "$B/build/client_src/vrpn_print_devices" "$B/bin/" 2>/dev/null || true
inc="-I$B/build -I$VRPN_SRC -I$VRPN_SRC/quat"
libs="$B/build/libvrpnserver.a $B/build/quat/libquat.a -lpthread -lm"
for p in sender receiver; do
	g++ -O1 -std=c++11 -DVRPN_USING_CMAKE="\"$B/build/vrpn_Configure.h\"" $inc -o "$B/bin/$p" "$here/$p.C" $libs
done
echo "built: $B/bin/sender $B/bin/receiver (VRPN $(git -C "$MIRROR" rev-parse --short=8 HEAD 2>/dev/null || echo '?'))"
