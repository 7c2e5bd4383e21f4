# Sourced first by the root fault tests: as root, re-runs the test in a mount namespace of its own
# with a private /run/netns (a tmpfs), so that `contend emu down --all` and the checks for
# leftovers see only this test's namespaces, never the host's or another test's.
if [ "$(id -u)" -eq 0 ] && [ -z "${CONTEND_FAULTS_PRIVATE_NETNS:-}" ]; then
  export CONTEND_FAULTS_PRIVATE_NETNS=1
  exec unshare --mount --propagation private bash -c 'mkdir -p /run/netns && mount -t tmpfs contend-faults /run/netns &&
    exec bash "$0" "$@"' "$0" "$@"
fi
