# apm-sync image: `docker build -t apm-sync .` then `docker run --rm -e DATABASE_URL=... -e APM_BASE_URL=... apm-sync sync`
# Stage 1 compiles TypeScript with the dev dependencies; stage 2 has production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step applies patches/ (patch-package: the postgres.js fixes) and builds the
# embedded database template (bin/pglite-template.js).
COPY patches ./patches
COPY bin ./bin
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY jobs ./jobs
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
COPY bin ./bin
# --omit=optional: graphile-worker's cosmiconfig lists typescript as an optional peer, which npm would
# otherwise install here (it is only needed for TypeScript config files, which we do not use).
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# The embedded database (no DATABASE_URL) lives under /app/.apm-sync: mount a volume there.
RUN mkdir -p /app/.apm-sync && chown node:node /app/.apm-sync
# The memory flags `npm run cli` uses (docs/operating.md "Memory"); `-e NODE_OPTIONS=...` replaces
# them. Set after the install: building the embedded template needs more.
ENV NODE_OPTIONS="--max-old-space-size=160 --max-semi-space-size=8"
USER node
ENTRYPOINT ["node", "bin/apm-sync.js"]
CMD ["--help"]
