# The service's container image: the release tree (npm run release) on Node 20, Debian slim.
#
#   docker build -t booking-service .
#   docker run -d -p 3000:3000 -v booking-data:/var/lib/booking \
#     -e BOOKING_ENV=production -e OPS_TOKEN=… -e SECRETS_KEY=… booking-service
#
# The image is not built in CI (no registry or engine there); CI builds the same release
# tree and runs it as an unprivileged user from a read-only copy (test/release/operator-run.sh).

# --- build: compile, then assemble the release tree in /release (production dependencies only)
FROM node:20-bookworm-slim AS build
# Native addons (better-sqlite3) compile here when no prebuilt binary can be fetched.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
  && npm run release -- /release

# --- runtime: the release tree, owned by root, run by an unprivileged user
FROM node:20-bookworm-slim
RUN useradd --system --no-create-home --shell /usr/sbin/nologin booking \
  && mkdir -p /var/lib/booking \
  && chown booking:booking /var/lib/booking
COPY --from=build /release /app
WORKDIR /app
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=3000 \
  DATABASE_URL=/var/lib/booking/booking.sqlite \
  MALLOC_MMAP_THRESHOLD_=131072
VOLUME ["/var/lib/booking"]
USER booking
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=2", "dist/main.js"]
