#!/bin/sh
# The proxy's entry point (deploy/proxy/Dockerfile): nginx, and a watch on its instances' addresses.
# nginx looks up the names in nginx.conf's upstream (compose.yaml's instances) once, when it loads its configuration.
# An instance that compose recreates (`docker compose up -d --build` after a change) comes back at a new
# address nginx would not see: its requests would go to the other instance, or fail once both are new.
# So every 5 s the names are looked up again, and when an address changed nginx reloads (it looks them up
# anew; requests in flight finish on the old workers). A name that does not resolve yet (an instance
# being recreated) is retried, and the running configuration kept, until `nginx -t` passes.
names=$(sed -n 's/^ *server \([A-Za-z0-9_.-]*\):[0-9]*.*/\1/p' /etc/nginx/nginx.conf)
# Every address of each name, sorted (a name with several, in varying order, is no change).
addresses() {
  for name in $names; do
    echo "$name: $(getent ahosts "$name" | awk '{ print $1 }' | sort -u | tr '\n' ' ')"
  done
}

nginx -g 'daemon off;' &
nginx_pid=$!
# `docker stop` sends SIGQUIT (STOPSIGNAL): nginx finishes the requests it has, then exits.
trap 'kill -QUIT "$nginx_pid" 2>/dev/null' QUIT TERM INT

seen=$(addresses)
while kill -0 "$nginx_pid" 2>/dev/null; do
  sleep 5 &
  wait $! 2>/dev/null
  now=$(addresses)
  if [ "$now" != "$seen" ] && nginx -t -q 2>/dev/null && nginx -s reload; then
    echo "proxy: an instance's address changed; nginx reloaded" >&2
    seen=$now
  fi
done
wait "$nginx_pid"
