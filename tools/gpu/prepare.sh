#!/usr/bin/env bash
# On the development machine (Debian 12): unpack the headers the GPU host lacks (sqlite3.h, seccomp.h
# for the CPU sandbox's runner, and the nlohmann_json CMake package) and bubblewrap, which it lacks too
# (the worker finds it through KFORGE_BWRAP=.gpu/root/usr/bin/bwrap), into .gpu/root, which .gitignore
# keeps out of git. Pass carry: [".gpu"] to the device call so tools/gpu/run.sh finds them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .gpu && mkdir -p .gpu/debs
(cd .gpu/debs && apt-get download libsqlite3-dev libseccomp-dev nlohmann-json3-dev bubblewrap)
for d in .gpu/debs/*.deb; do dpkg -x "$d" .gpu/root; done
rm -rf .gpu/debs
# The static libraries and the dangling .so links are of no use there: the host's libsqlite3.so.0 and
# libseccomp.so.2 are (CMake finds the latter by that name).
rm -f .gpu/root/usr/lib/x86_64-linux-gnu/libsqlite3.a .gpu/root/usr/lib/x86_64-linux-gnu/libsqlite3.so \
      .gpu/root/usr/lib/x86_64-linux-gnu/libseccomp.a .gpu/root/usr/lib/x86_64-linux-gnu/libseccomp.so
du -sh .gpu
