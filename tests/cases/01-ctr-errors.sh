#!/bin/bash
# Every constructor error is refused with its precise message, and leaves
# nothing behind (the module still unloads at the end of the run).
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64
"$CHANNELS" create 1 --prefix rsx --size-mb 80 >/dev/null
d=("${T_DEVS[@]}")
len=$(t_usable 128)

# Each table goes in after a marker line written to the kernel log; the
# messages are checked at the end from one read of the log (a process
# costs a tenth of a second or more in the emulator).
tries=() tables=()
try() { # try <expected message> <table>
	local want=$1 table=$2
	echo "rainssd-case01: try ${#tries[@]}" >/dev/kmsg
	tries+=("$want") tables+=("$table")
	if echo "$table" | dmsetup create rs_bad 2>/dev/null; then
		dmsetup remove --retry rs_bad
		fail "accepted: $table"
	fi
}
check_tries() {
	local i=-1 line want
	declare -A seen=()
	while IFS= read -r line; do
		if [[ $line =~ rainssd-case01:\ try\ ([0-9]+)$ ]]; then
			i=${BASH_REMATCH[1]}
		elif [ "$i" -ge 0 ] && [[ $line == *"${tries[$i]}"* ]]; then
			seen[$i]=1
		fi
	done < <(dmesg)
	for i in "${!tries[@]}"; do
		want=${tries[$i]}
		[ -n "${seen[$i]:-}" ] || fail "no '$want' for: ${tables[$i]}"
		note "refused: $want"
	done
}

try "Not enough arguments" "0 $len rainssd 128"
try "Invalid chunk size" "0 $len rainssd 96 4 ${d[*]}"
try "Invalid chunk size" "0 $len rainssd 4 4 ${d[*]}"
try "Invalid chunk size" "0 $len rainssd 4096 4 ${d[*]}"
try "Invalid chunk size" "0 $len rainssd abc 4 ${d[*]}"
try "Invalid number of member devices" "0 $len rainssd 128 2 ${d[0]} ${d[1]}"
try "Invalid number of member devices" "0 $len rainssd 128 33 ${d[*]}"
try "Fewer member devices given" "0 $len rainssd 128 4 ${d[0]} ${d[1]} ${d[2]}"
try "The same device is given twice" "0 $len rainssd 128 4 ${d[0]} ${d[1]} ${d[2]} ${d[1]}"
try "Member devices differ in size" "0 $len rainssd 128 4 ${d[0]} ${d[1]} ${d[2]} /dev/rsx0"
try "Cannot open member device" "0 $len rainssd 128 4 ${d[0]} ${d[1]} ${d[2]} /dev/nonexistent"
try "Target length exceeds" "0 $((len + 1)) rainssd 128 4 ${d[*]}"
try "Unknown optional argument" "0 $len rainssd 128 4 ${d[*]} 2 turbo 1"
try "Optional argument without its value" "0 $len rainssd 128 4 ${d[*]} 1 policy"
try "Optional argument without its value" "0 $len rainssd 128 4 ${d[*]} 3 policy rcw read_policy"
try "Invalid rebuild" "0 $len rainssd 128 4 ${d[*]} 2 rebuild 4"
try "rebuild names a member given as -" "0 $len rainssd 128 4 - ${d[1]} ${d[2]} ${d[3]} 2 rebuild 0"
try "min_recovery_rate must not exceed" "0 $len rainssd 128 4 ${d[*]} 2 min_recovery_rate 300000"
try "Invalid max_corr_read_errors" "0 $len rainssd 128 4 ${d[*]} 2 max_corr_read_errors x"
try "A new volume cannot have a missing member" "0 $len rainssd 128 4 - ${d[1]} ${d[2]} ${d[3]}"
try "No member device given" "0 $len rainssd 128 3 - - -"
try "Unknown policy" "0 $len rainssd 128 4 ${d[*]} 2 policy fastest"
try "Unknown read_policy" "0 $len rainssd 128 4 ${d[*]} 2 read_policy count"
try "Invalid ewma_weight" "0 $len rainssd 128 4 ${d[*]} 2 ewma_weight 0"
try "Invalid ewma_weight" "0 $len rainssd 128 4 ${d[*]} 2 ewma_weight 1025"
try "Invalid freq_window" "0 $len rainssd 128 4 ${d[*]} 2 freq_window x"
try "Invalid stall_factor" "0 $len rainssd 128 4 ${d[*]} 2 stall_factor 1001"
try "Invalid xor_ns" "0 $len rainssd 128 4 ${d[*]} 2 xor_ns -5"
try "Invalid probe_ms" "0 $len rainssd 128 4 ${d[*]} 2 probe_ms 60001"
try "Invalid recon_load_pct" "0 $len rainssd 128 4 ${d[*]} 2 recon_load_pct 1001"
try "Optional argument given twice" "0 $len rainssd 128 4 ${d[*]} 4 policy rcw policy rmw"
try "Invalid number of optional arguments" "0 $len rainssd 128 4 ${d[*]} 9 policy rmw"
try "Invalid number of optional arguments" "0 $len rainssd 128 4 ${d[*]} 29 policy rmw"
try "Invalid stripe_cache" "0 $len rainssd 128 4 ${d[*]} 2 stripe_cache 63"
try "this geometry needs 64 to 32768 entries" "0 $len rainssd 128 4 ${d[*]} 2 stripe_cache 63"
try "Invalid stripe_cache" "0 $len rainssd 128 4 ${d[*]} 2 stripe_cache 32769"
try "Invalid region_size" "0 $len rainssd 128 4 ${d[*]} 2 region_size 7"
try "Invalid region_size" "0 $len rainssd 128 4 ${d[*]} 2 region_size x"
try "Too many arguments" "0 $len rainssd 128 4 ${d[*]} 2 policy rmw extra"
"$CHANNELS" destroy --prefix rsx
# Members smaller than the data offset plus one chunk.
"$CHANNELS" create 3 --prefix rsx --size-mb 16 >/dev/null
try "Member devices too small" "0 8 rainssd 128 3 /dev/rsx0 /dev/rsx1 /dev/rsx2"
check_tries
