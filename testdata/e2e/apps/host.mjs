// The host side of apps.test.mjs, in the browser: AppBridge renders one ui:// resource in a
// sandboxed iframe (scripts only, an opaque origin, the resource's CSP in a meta tag) and relays
// its tools/call to the test (window.relayToolCall, a Playwright binding that calls the real
// server with the TypeScript SDK). The test drives it through window.host.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

let bridge;
let iframe;
let context = {};
const sizes = [];
const modelContext = [];

// cspOf builds the frame's Content-Security-Policy from the resource's _meta.ui.csp, deny by
// default: inline script and style only, unless the resource names origins.
function cspOf(csp = {}) {
  const res = (csp.resourceDomains ?? []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`.trim(),
    `style-src 'unsafe-inline' ${res}`.trim(),
    `img-src data: ${res}`.trim(),
    `font-src data: ${res}`.trim(),
    `media-src data: ${res}`.trim(),
    `connect-src ${(csp.connectDomains ?? []).join(' ') || "'none'"}`,
    `frame-src ${(csp.frameDomains ?? []).join(' ') || "'none'"}`,
    `base-uri ${(csp.baseUriDomains ?? []).join(' ') || "'none'"}`,
    "form-action 'none'",
  ].join('; ');
}

function withCsp(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${cspOf(csp).replace(/"/g, '&quot;')}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (m) => m + meta) : meta + html;
}

window.host = {
  // mount shows the app and resolves once it has sent ui/notifications/initialized.
  async mount({ html, csp, hostContext, title }) {
    context = hostContext ?? {};
    iframe = document.createElement('iframe');
    iframe.title = title;
    iframe.setAttribute('sandbox', 'allow-scripts');
    document.getElementById('slot').append(iframe);
    bridge = new AppBridge(null, { name: 'ownsona-e2e-host', version: '1.0.0' }, { serverTools: {}, logging: {}, updateModelContext: { text: {} } }, { hostContext: context });
    bridge.oncalltool = (params) => window.relayToolCall(params);
    bridge.onupdatemodelcontext = async (params) => { modelContext.push(params); return {}; };
    bridge.addEventListener('sizechange', ({ width, height }) => {
      sizes.push({ width, height });
      if (typeof height === 'number') iframe.style.height = `${height}px`;
    });
    const initialized = new Promise((resolve) => bridge.addEventListener('initialized', resolve));
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.srcdoc = withCsp(html, csp);
    await initialized;
    return { appInfo: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() };
  },
  sendToolInput(args) { return bridge.sendToolInput({ arguments: args }); },
  sendToolResult(result) { return bridge.sendToolResult(result); },
  setHostContext(partial) {
    context = { ...context, ...partial };
    document.body.classList.toggle('dark', context.theme === 'dark');
    bridge.setHostContext(context);
  },
  sizes() { return sizes.slice(); },
  modelContext() { return modelContext.slice(); },
  teardown() { return bridge.teardownResource({}); },
};
window.hostReady = true;
