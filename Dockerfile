# trajwatch: runs its TypeScript sources directly on Node 24 (type stripping; no build step).
FROM node:24-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

# Runtime dependencies only; the `node` devDependency is not needed, the image is Node 24.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY src ./src

RUN mkdir -p /data && chown node:node /data
# The image's unprivileged user (uid 1000).
USER node

ENV TRAJWATCH_OTLP_HTTP=0.0.0.0:4318 \
    TRAJWATCH_DATA_DIR=/data
EXPOSE 4318
VOLUME ["/data"]

# The slim image has no curl: Node's fetch checks /healthz on the listen port.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:4318/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "src/cli/main.ts"]
CMD ["serve"]
