"""A small tool-using agent loop traced with the official OpenTelemetry Python SDK.

Spans follow the OpenTelemetry GenAI semantic conventions (invoke_agent, chat, execute_tool).
The exporter is configured the way an unmodified app is, from the standard environment
variables: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL picks the exporter package (grpc or
http/protobuf), and the exporter itself reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
OTEL_EXPORTER_OTLP_TRACES_COMPRESSION.

Usage: agent_loop.py CONVERSATION_ID
Prints "exported N spans" and exits 0 when every export succeeded, else exits 1.
"""

import json
import os
import sys
import time

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

MODEL = "gpt-4o-mini"
AGENT = "research-assistant"

# What the scripted model asks for, turn by turn; None means it answers.
PLAN = [
    ("search_docs", {"query": "OTLP gRPC default port", "top_k": 2}),
    ("fetch_page", {"url": "https://example.invalid/otlp"}),
    None,
]


class ToolFailed(Exception):
    pass


def search_docs(query, top_k):
    return [{"title": "OTLP Specification", "snippet": "OTLP/gRPC listens on 4317"}][:top_k]


def fetch_page(url):
    raise ToolFailed(f"connection refused: {url}")


TOOLS = {"search_docs": search_docs, "fetch_page": fetch_page}


class CountingExporter(SpanExporter):
    """Delegates to the real exporter and remembers whether every batch went through."""

    def __init__(self, inner):
        self.inner = inner
        self.exported = 0
        self.failed = False

    def export(self, spans):
        result = self.inner.export(spans)
        if result == SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed = True
        return result

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis=30000):
        return self.inner.force_flush(timeout_millis)


def make_exporter():
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    elif protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    else:
        sys.exit(f"agent_loop: unsupported OTLP protocol {protocol!r}")
    return OTLPSpanExporter()


def run(tracer, conversation_id):
    common = {"gen_ai.conversation.id": conversation_id, "gen_ai.agent.name": AGENT}
    with tracer.start_as_current_span(
        f"invoke_agent {AGENT}", attributes={**common, "gen_ai.operation.name": "invoke_agent"}
    ):
        for turn, step in enumerate(PLAN):
            with tracer.start_as_current_span(
                f"chat {MODEL}",
                kind=SpanKind.CLIENT,
                attributes={
                    **common,
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": MODEL,
                },
            ) as chat:
                time.sleep(0.01)
                chat.set_attribute("gen_ai.response.finish_reasons", ["stop" if step is None else "tool_calls"])
            if step is None:
                return
            name, args = step
            call_id = f"call_{turn + 1}"
            with tracer.start_as_current_span(
                f"execute_tool {name}",
                attributes={
                    **common,
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": json.dumps(args),
                },
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                time.sleep(0.01)
                try:
                    result = TOOLS[name](**args)
                    span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
                except ToolFailed as error:
                    # The agent carries on: the failure goes back to the model as the tool's answer.
                    span.record_exception(error)
                    span.set_attribute("error.type", type(error).__name__)
                    span.set_status(Status(StatusCode.ERROR, str(error)))


def main():
    conversation_id = sys.argv[1]
    exporter = CountingExporter(make_exporter())
    provider = TracerProvider(resource=Resource.create({"service.name": "python-research-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    run(provider.get_tracer("agent_loop"), conversation_id)
    provider.shutdown()
    if exporter.failed or exporter.exported == 0:
        print(f"export failed after {exporter.exported} spans", file=sys.stderr)
        return 1
    print(f"exported {exporter.exported} spans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
