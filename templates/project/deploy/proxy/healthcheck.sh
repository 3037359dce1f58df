#!/bin/bash
# The proxy's HEALTHCHECK (deploy/proxy/Dockerfile): GET /health through nginx itself, on its own port, as a
# buyer's request goes. Healthy when nginx answers and an instance behind it answers 200 (ready to take paid
# jobs); bash's /dev/tcp sends the request, so the image needs no curl or wget.
# When no instance answers (all stopped, or all degraded: ledger or settlement down), the proxy turns
# unhealthy too, on purpose: it then reports the outage a buyer sees (nginx's typed 503), where a check of
# nginx alone would say all is well. Nothing restarts it for that (compose does not act on unhealthy, and
# restarting nginx would bring no instance back); it is healthy again on the first answer once an instance
# is back. The instances' own checks say which one is down.
exec 3<>/dev/tcp/127.0.0.1/8080 || exit 1
printf 'GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
# The status line, "HTTP/1.1 200 OK": within 2 s (the check's timeout is 3 s).
read -r -t 2 _ status _ <&3 && [ "$status" = 200 ]
