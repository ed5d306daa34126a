// Prints the incident's three spans as the JavaScript SDK's ConsoleSpanExporter does
// (console.dir of its _exportInfo, depth 3), with the program's own output between them:
//   node incident.js > incident.txt
// The spans are written by hand (the SDK's real output is under fixtures/otlp-console-js-*);
// their printing is Node's own util.inspect.
const trace = 'd483b3125fd8633e7f2d036b32532e13';
const tool = 'df6e10e1f19c3de4';
const T0 = 1764684131402000; // 2025-12-02T14:02:11.402Z, in microseconds
const resource = { attributes: { 'service.name': 'agent', 'telemetry.sdk.language': 'nodejs', 'process.pid': 4242 } };
const scope = { name: '@opentelemetry/instrumentation-undici', version: '0.10.0', schemaUrl: undefined };
function span(id, parent, name, kind, start, duration, attributes, status, events) {
  return {
    resource, instrumentationScope: scope, traceId: trace,
    parentSpanContext: parent && { traceId: trace, spanId: parent, traceFlags: 1, traceState: undefined },
    traceState: undefined, name, id, kind, timestamp: T0 + start, duration, attributes, status,
    events, links: [],
  };
}
console.log('refund agent listening on :3000');
console.dir(span('ff86e1e49cb1ca4a', tool, 'POST', 2, 16000, 10000000, {
  'http.request.method': 'POST', 'url.full': 'https://payments.internal/v1/refunds',
  'http.request.header.idempotency-key': ['k-1'], 'error.type': 'UND_ERR_HEADERS_TIMEOUT',
}, { code: 2, message: 'Headers Timeout Error' }, [{
  name: 'exception', attributes: {
    'exception.type': 'UND_ERR_HEADERS_TIMEOUT', 'exception.message': 'Headers Timeout Error',
    'exception.stacktrace': 'HeadersTimeoutError: Headers Timeout Error\n    at Timeout.onParserTimeout (node:internal/deps/undici/undici:1:1)',
  }, time: [1764684141, 418000000], droppedAttributesCount: 0,
}]), { depth: 3 });
console.log('retrying refund for A-88214');
console.dir(span('0a1b2c3d4e5f6071', tool, 'POST', 2, 10518000, 90000.5, {
  'http.request.method': 'POST', 'url.full': 'https://payments.internal/v1/refunds',
  'http.request.header.idempotency-key': ['k-2'], 'http.response.status_code': 201,
}, { code: 0 }, []), { depth: 3 });
console.dir(span(tool, undefined, 'execute_tool issue_refund', 0, 0, 10698000, {
  'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'issue_refund',
  'gen_ai.tool.call.arguments': JSON.stringify({ order: 'A-88214', amount_p: 4500 }),
}, { code: 0 }, []), { depth: 3 });
