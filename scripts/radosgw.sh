#!/usr/bin/env bash
# A one-node Ceph cluster serving real S3 on 127.0.0.1:$RGW_PORT for the storage tests
# (design/stack.md): 1 monitor, 1 memstore OSD (nothing on disk but logs), radosgw (beast),
# no authentication inside the cluster, an S3 user TESTAK / TESTSECRET. About 15 s to ready.
#   scripts/radosgw.sh start DIR   starts it (DIR holds its config, logs and pid files)
#   scripts/radosgw.sh stop DIR    stops it
# The Debian packages: radosgw ceph-mon ceph-osd. Ports: RGW_PORT (47480), MON_PORT (46789).
set -uo pipefail
cmd=${1:?start|stop}; D=$(realpath -m "${2:-./ceph-test}")
RGW_PORT=${RGW_PORT:-47480}; MON_PORT=${MON_PORT:-46789}

stop() {
  for p in rgw osd mon; do [ -f "$D/$p.pid" ] && kill -9 "$(cat "$D/$p.pid")" 2>/dev/null; done
  rm -f "$D"/*.pid
  return 0
}
if [ "$cmd" = stop ]; then stop; exit 0; fi

# One try, every step bounded: a minute in all.
attempt() {
  local deadline=$((SECONDS + 60))
  rm -rf "$D" && mkdir -p "$D/run" "$D/osd.0" && cd "$D" || return 1
  local fsid; fsid=$(cat /proc/sys/kernel/random/uuid)
  cat > ceph.conf <<CONF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$MON_PORT
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
# The OSD's commands to the monitor at init (its device class, its place in the CRUSH map) may go
# out before it has the monitor map, with a zero fsid, and fail its start ('wrong fsid'): it sends
# none, and is placed in the CRUSH map from here.
osd class update on start = false
osd crush update on start = false
memstore device bytes = 2147483648
run dir = $D/run
log file = $D/\$name.log
admin socket = $D/run/\$name.asok
ms bind ipv6 = false
# The OSD's ports next to the monitor's, not Ceph's shared 6800-7300: two clusters on one machine
# (a developer's and a test run's) would otherwise reach each other's daemons ('wrong fsid').
ms bind port min = $((MON_PORT + 1))
ms bind port max = $((MON_PORT + 50))
mon data = $D/mon.\$id
osd data = $D/osd.\$id
keyring = $D/keyring
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
CONF
  ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null || return 1
  monmaptool --create --add a "v1:127.0.0.1:$MON_PORT" --fsid "$fsid" monmap >/dev/null || return 1
  ceph-mon -c ceph.conf --mkfs -i a --monmap monmap --keyring keyring || return 1
  ceph-mon -c ceph.conf -i a -f > mon.out 2>&1 & echo $! > mon.pid
  timeout 30 ceph -c ceph.conf osd create >/dev/null || return 1
  timeout 30 ceph -c ceph.conf osd crush add osd.0 1.0 root=default >/dev/null 2>&1 || return 1
  ceph-osd -c ceph.conf -i 0 --mkfs --osd-uuid "$(cat /proc/sys/kernel/random/uuid)" >/dev/null 2>&1 || return 1
  ceph-osd -c ceph.conf -i 0 -f > osd.out 2>&1 & echo $! > osd.pid
  # An OSD refused at boot ('wrong fsid', seen now and then on a first try) never comes up: try again at once.
  until timeout 5 ceph -c ceph.conf osd stat 2>/dev/null | grep -q '1 up'; do
    [ $SECONDS -lt $deadline ] && ! grep -q 'wrong fsid' "$D/osd.0.log" 2>/dev/null || return 1
    sleep 0.5
  done
  radosgw -c ceph.conf -n client.rgw -f > rgw.out 2>&1 & echo $! > rgw.pid
  until curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.5; done
  timeout 30 radosgw-admin -c ceph.conf user create --uid=test --display-name=test --access-key=TESTAK --secret=TESTSECRET >/dev/null
}

# A start not ready in time is stopped and tried again (three tries), its logs' tails shown.
for try in 1 2 3; do
  stop
  if (attempt); then echo "radosgw ready on http://127.0.0.1:$RGW_PORT"; exit 0; fi
  echo "radosgw start $try of 3 failed; the logs' tails:" >&2
  tail -n 3 "$D"/*.out "$D"/*.log >&2 2>/dev/null
done
stop
exit 1
