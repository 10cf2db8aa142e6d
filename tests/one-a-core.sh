# Sourced by the test runners: one_a_core CMD [ARGS...] runs CMD in the
# background, first waiting for one already running when every core has
# one; `wait` after the last.
one_a_core_slots=$(nproc 2>/dev/null || echo 1)
one_a_core_running=0
one_a_core() {
  "$@" &
  one_a_core_running=$((one_a_core_running + 1))
  if [ "$one_a_core_running" -ge "$one_a_core_slots" ]; then
    wait -n
    one_a_core_running=$((one_a_core_running - 1))
  fi
}
