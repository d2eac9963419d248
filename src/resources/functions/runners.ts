/**
 * The programs a call's child process starts with, written beside the function's code: each reads the
 * call's input as JSON on stdin, loads the handler, calls `handle` and writes the outcome as JSON to file
 * descriptor 3 (`{ok: true, response}` or `{ok: false, message, trace}`), so that stdout and stderr are the
 * handler's own, kept as the call's logs.
 */

/** Python: `handle` gets the arguments it names, of data, client, secrets and function_call_info. */
export const PYTHON_RUNNER = String.raw`
import importlib.util, inspect, json, os, sys, traceback

def client_for(call):
    try:
        from cognite.client import ClientConfig, CogniteClient
        from cognite.client.credentials import Token
    except ImportError:
        raise RuntimeError("handle takes a client, which needs the cognite-sdk package; it is not installed for this interpreter")
    config = ClientConfig(client_name="strata-function", project=call["project"], base_url=call["baseUrl"], credentials=Token(call["token"]))
    return CogniteClient(config)

def main():
    call = json.loads(sys.stdin.read())
    out = os.fdopen(3, "w")
    try:
        path = os.path.abspath(call["handler"])
        # Isolated mode (-I) puts neither the working directory nor the handler's on the import path.
        sys.path[0:0] = [os.path.dirname(path), os.getcwd()]
        spec = importlib.util.spec_from_file_location("handler", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        handle = getattr(module, "handle", None)
        if not callable(handle):
            raise RuntimeError(call["handler"] + " has no function named handle")
        given = {"data": call.get("data"), "secrets": call.get("secrets") or {}, "function_call_info": call.get("info")}
        args = {}
        for name in inspect.signature(handle).parameters:
            if name == "client":
                args[name] = client_for(call)
            elif name in given:
                args[name] = given[name]
            else:
                raise TypeError("handle takes an argument " + repr(name) + "; it may take data, client, secrets and function_call_info")
        text = json.dumps({"ok": True, "response": handle(**args)})
    except BaseException as error:
        traceback.print_exc()
        text = json.dumps({"ok": False, "message": type(error).__name__ + ": " + str(error), "trace": traceback.format_exc()})
    out.write(text)
    out.close()

main()
`;

/** JavaScript: the module's `handle(data, context)`, awaited; context holds secrets, functionCallInfo, project, baseUrl and token. */
export const NODE_RUNNER = String.raw`
const { createWriteStream } = require('node:fs');
const { resolve } = require('node:path');
const { pathToFileURL } = require('node:url');

function finish(outcome) {
  const out = createWriteStream(null, { fd: 3 });
  out.end(JSON.stringify(outcome));
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  try {
    const module = await import(pathToFileURL(resolve(call.handler)).href);
    const handle = module.handle ?? module.default?.handle;
    if (typeof handle !== 'function') throw new Error(call.handler + ' exports no function named handle');
    const response = await handle(call.data, { secrets: call.secrets ?? {}, functionCallInfo: call.info, project: call.project, baseUrl: call.baseUrl, token: call.token });
    finish({ ok: true, response: response === undefined ? null : response });
  } catch (error) {
    console.error(error);
    finish({ ok: false, message: error instanceof Error ? error.name + ': ' + error.message : String(error), trace: error instanceof Error ? error.stack : undefined });
  }
}

main();
`;
