#!/usr/bin/env bash
# Rehearses bench/gpu_device_check.sh offline, as the GPU machine will run it, on a Debian 12 host
# without a GPU: a fresh Debian 12 chroot (debootstrap minbase) with only what a bare CUDA machine
# has (g++, CMake, ninja, Python, make, binutils; none of our -dev libraries and no pkg-config, so
# the build can only find them in the bundle), the CUDA toolkit bind-mounted read-only at
# /usr/local/cuda, this repository (with .device/) bind-mounted at its own path, and no network
# (unshare -n). Two runs:
#   toolkit: NCCL from the toolkit, the bundle unpacked with dpkg-deb;
#   python:  the toolkit's NCCL hidden (an overlay with whiteouts over it), a fake nvidia-nccl pip
#            package in the chroot (site-packages/nvidia/nccl with include/nccl.h and only the
#            versioned lib/libnccl.so.2, copied from the toolkit) found through `import nvidia.nccl`,
#            and the bundle unpacked with ar and tar.
# Without a GPU, each run must build everything and report the GPU steps as SKIP ("no CUDA
# device"), none as FAIL. The build dir (build/cuda) is the repository's, so the second run reuses
# the first's objects. Every mount is undone on exit, also on failure.
# Needs root, debootstrap and the Debian archive (for the chroot's packages; the runs themselves
# have no network), and the bundle (scripts/gpu-bundle.sh).
# Usage: bench/gpu_rehearsal.sh [toolkit|python|both]   (default both; outputs under $CHROOT/tmp)
# CHROOT (default /var/tmp/contend-gpu-chroot) is kept between rehearsals; delete it to start over.
set -euo pipefail

which=${1:-both}
repo=$(cd "$(dirname "$0")/.." && pwd)
chroot_dir=${CHROOT:-/var/tmp/contend-gpu-chroot}
cuda=$(readlink -f /usr/local/cuda)
[ "$(id -u)" -eq 0 ] || { echo "gpu-rehearsal: needs root (chroot, mounts)" >&2; exit 1; }
[ -d "$cuda/bin" ] || { echo "gpu-rehearsal: no CUDA toolkit at /usr/local/cuda" >&2; exit 1; }
compgen -G "$repo/.device/*.deb" >/dev/null || { echo "gpu-rehearsal: no bundle: run scripts/gpu-bundle.sh" >&2; exit 1; }

mounts=()  # mount points, in mounting order; undone in reverse
cleanup() {
  local rc=$? i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" || echo "gpu-rehearsal: could not unmount ${mounts[$i]}" >&2
  done
  rm -rf "${hide:-}"
  exit $rc
}
trap cleanup EXIT INT TERM
mount_at() {  # mount_at TARGET MOUNT-ARGS...
  local target=$1; shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}

if [ ! -x "$chroot_dir/usr/bin/cmake" ]; then
  echo "gpu-rehearsal: making the chroot in $chroot_dir"
  debootstrap --variant=minbase bookworm "$chroot_dir" http://deb.debian.org/debian
  cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
  mount_at "$chroot_dir/proc" -t proc proc
  chroot "$chroot_dir" apt-get update -q
  chroot "$chroot_dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    g++ cmake ninja-build python3 make binutils
  chroot "$chroot_dir" apt-get clean
  umount "$chroot_dir/proc"
  mounts=()
fi
for lib in libnl-3-dev catch2 libopenblas-pthread-dev pkgconf; do
  if chroot "$chroot_dir" dpkg-query -W "$lib" >/dev/null 2>&1; then
    echo "gpu-rehearsal: $lib is installed in the chroot: the rehearsal would not prove the bundle" >&2
    exit 1
  fi
done

mount_at "$chroot_dir/proc" -t proc proc
mount_at "$chroot_dir/dev" --bind /dev
mount_at "$chroot_dir$repo" --bind "$repo"
ln -sfn "$(basename "$cuda")" "$chroot_dir/usr/local/cuda"

# run NAME [ENV...]: the device check inside the chroot, without network; output in /tmp/NAME.
run() {
  local name=$1; shift
  echo
  echo "gpu-rehearsal: run '$name': unshare -n chroot $chroot_dir ... bash bench/gpu_device_check.sh"
  rm -rf "$chroot_dir/tmp/$name"
  # 2 shared cores here: each step gets 8x its time, the whole check an hour (16 on the device).
  set +e
  nice -n 19 ionice -c3 unshare -n chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/bin:/bin \
    HOME=/root OUT="/tmp/$name" CONTEND_CHECK_BUDGET_S=3600 CONTEND_CHECK_SLOWDOWN=8 "$@" \
    bash -c "cd '$repo' && bash bench/gpu_device_check.sh"
  local rc=$?
  set -e
  echo "gpu-rehearsal: run '$name' exited $rc; $chroot_dir/tmp/$name/gpu-check.json:"
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["schema"], d["result"], d["device"])
for s in d["steps"]:
    print("  %-20s %-8s %7.1f  %s" % (s["name"], s["status"], s["seconds"], s["note"][:80]))' \
    "$chroot_dir/tmp/$name/gpu-check.json"
  return $rc
}

status=0
if [ "$which" = toolkit ] || [ "$which" = both ]; then
  mount_at "$chroot_dir$cuda" --bind "$cuda"
  mount -o remount,bind,ro "$chroot_dir$cuda"
  run toolkit || status=1
  umount "$chroot_dir$cuda"
  unset 'mounts[${#mounts[@]}-1]'
fi
if [ "$which" = python ] || [ "$which" = both ]; then
  # The toolkit without its NCCL: whiteouts (0/0 character devices) in an overlay's upper layer.
  hide=$(mktemp -d /tmp/contend-nccl-hide-XXXXXX)
  mkdir -p "$hide/include" "$hide/lib"
  for f in include/nccl.h include/nccl_device.h include/nccl_device lib/libnccl.so lib/libnccl.so.2 \
           lib/libnccl_static.a; do
    mknod "$hide/$f" c 0 0
  done
  mount_at "$chroot_dir$cuda" -t overlay overlay -o "ro,lowerdir=$hide:$cuda"
  if compgen -G "$chroot_dir/usr/local/cuda/lib/libnccl*" >/dev/null || [ -e "$chroot_dir/usr/local/cuda/include/nccl.h" ]; then
    echo "gpu-rehearsal: the toolkit's NCCL is still visible in the chroot" >&2
    exit 1
  fi
  # A fake nvidia-nccl-cu13: the versioned library only, as the wheel has it.
  site=$chroot_dir/opt/fakepy/site-packages/nvidia/nccl
  rm -rf "$chroot_dir/opt/fakepy"
  mkdir -p "$site/include" "$site/lib"
  cp "$cuda/include/nccl.h" "$site/include/"
  cp "$cuda/lib/libnccl.so.2" "$site/lib/"
  run python PYTHONPATH=/opt/fakepy/site-packages CONTEND_UNPACK_WITH_AR=1 || status=1
  grep -h "NCCL: \|NCCL found" "$chroot_dir/tmp/python/gpu-check.log" || true
  readelf -d "$repo/build/cuda/bin/contend" | grep -E "NEEDED.*nccl|RUNPATH" || true
fi
exit $status
