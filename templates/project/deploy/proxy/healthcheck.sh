#!/bin/bash
# The proxy's HEALTHCHECK (deploy/proxy/Dockerfile): nginx answering HTTP, asked on its own health port
# (127.0.0.1:8081 inside this container, never published: nginx.conf), with bash's /dev/tcp, so the
# image needs no curl or wget. It does not ask the instances behind nginx, on purpose: each has its own
# health check, and a proxy that turned unhealthy while they restart (a redeploy recreates them) would
# make `docker compose up --wait` fail a deploy that was fine a few seconds later. Nor is it `nginx -t`,
# which fails when an instance is stopped (its name no longer resolves) though nginx serves on.
exec 3<>/dev/tcp/127.0.0.1/8081 || exit 1
printf 'GET /proxy-health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
# The status line, "HTTP/1.1 200 OK": within 2 s (the check's timeout is 3 s).
read -r -t 2 _ status _ <&3 && [ "$status" = 200 ]
