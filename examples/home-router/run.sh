#!/bin/bash
# Example: a home/office router (router mode) with masquerade and a port
# forward. Builds
#   lan (laptop 10.61.1.2, nas 10.61.1.10) -- [fw: <p>fc 10.61.1.1 | <p>fs 10.61.2.1] -- inet (ISP 10.61.2.2, site 10.200.0.80)
# runs rampartd with policy.yaml, goes out from the LAN, comes in through
# the port forward, tries unsolicited inbound, shows the counters, stops
# and cleans up. README.md says what to look at.
#   sudo examples/home-router/run.sh [--keep]
# tests/lab/test_example_home_router.sh sources this file and checks the same.
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HOME_DIR/../lib.sh"

SITE=10.200.0.80	# a web site "out on the internet", behind the ISP's router
PUBLIC=10.61.2.1	# the uplink's address: masquerade and port forward

# The routed lab of tests/lab/lib.sh on 10.61.x (cli is the LAN, srv the
# internet), plus the nas address in the LAN, the site behind the ISP,
# and the LAN's route to the internet (10.200.0.0/16, no default route:
# a wider one would catch this host's resolver, 10.255.255.53).
home_setup() {
	lab_router_setup 61 || return 1
	lab_in cli ip addr add 10.61.1.10/24 dev "$CLI_IF" &&
		lab_in cli ip route add 10.200.0.0/16 via 10.61.1.1 &&
		lab_in srv ip addr add "$SITE/32" dev lo || return 1
	# rampartd takes next hops from the kernel's neighbour table and does
	# not resolve them itself: the router's kernel meets every LAN host
	# before rampartd starts (the nas too, or the port forward goes
	# nowhere: drop reason no-neighbour).
	lab_router_neighbours 61 >/dev/null && lab_in fw ping -q -c 1 -W 2 10.61.1.10 >/dev/null || return 1
	echo "hello from the internet" >"$LAB_TMP/site.txt"
	mkdir -p "$LAB_TMP/nas" && echo "hello from the nas" >"$LAB_TMP/nas/nas.txt"
	lab_bg srv "$LAB_TMP/site.log" "$LAB_PY" -m http.server 80 --bind "$SITE" --directory "$LAB_TMP"
	lab_bg cli "$LAB_TMP/nas.log" "$LAB_PY" -m http.server 80 --bind 10.61.1.10 --directory "$LAB_TMP/nas"
	lab_bg cli "$LAB_TMP/laptop.log" "$LAB_PY" -m http.server 8000 --bind 10.61.1.2 --directory "$LAB_TMP/nas"
	lab_wait_for 10 lab_port_listening srv tcp 80 && lab_wait_for 10 lab_port_listening cli tcp 80 &&
		lab_wait_for 10 lab_port_listening cli tcp 8000
}

home_start() {
	ex_policy "$HOME_DIR/policy.yaml" "$LAB_TMP/policy.yaml" eth1="$FW_IF_C" eth0="$FW_IF_S" &&
		ex_compile "$LAB_TMP/policy.yaml" "$LAB_TMP/policy.rfw" &&
		ex_rampartd router "$LAB_TMP/policy.rfw"
}

home_show() {
	ex_say "from the LAN out (rule lan-out, masquerade-lan)"
	ex_try "laptop: HTTP http://$SITE/site.txt" ex_http cli "http://$SITE/site.txt"
	ex_try "  ...and the site saw the uplink address $PUBLIC" ex_http_seen "$LAB_TMP/site.log" "$PUBLIC"
	ex_try "laptop: ping $SITE" lab_in cli ping -q -c 2 -i 0.2 -W 1 "$SITE"
	ex_say "from the internet in"
	ex_try "port forward: HTTP http://$PUBLIC:8080/nas.txt -> nas:80" ex_http srv "http://$PUBLIC:8080/nas.txt"
	ex_try "  ...and the nas saw the real client 10.61.2.2" ex_http_seen "$LAB_TMP/nas.log" 10.61.2.2
	ex_try "unsolicited: HTTP http://10.61.1.2:8000/ (the laptop)" ex_http srv http://10.61.1.2:8000/nas.txt
	ex_try "unsolicited: ping 10.61.1.2" lab_in srv ping -q -c 2 -i 0.2 -W 1 10.61.1.2
	ex_say "flows (rampartctl flows): the NAT REPLY column shows the translations"
	ex_ctl flows
}

[ "${BASH_SOURCE[0]}" = "$0" ] && ex_main rxh home "$@"
