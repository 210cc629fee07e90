// Mounts Foxglove Studio's App, exactly as @foxglove/studio-base 1.48's
// built bundle exports it (index.js put App and the data source factories
// on window), with the Foxglove WebSocket and the MCAP file data sources,
// layouts held in memory (/layout.json: {"empty": LayoutData, "panels":
// LayoutData}) and the deep link of the page's own URL
// (?ds=foxglove-websocket&ds.url=ws://...&layoutId=empty, or just
// ?layoutId=empty before __probe.openFile).
//
// window.__probe reads back what the app received and shows, from the
// app's own objects (found through React's fibers, read only):
//   - the message pipeline's store (what every panel is handed: its
//     messageEventsBySubscriberId, per panel subscriber), the player's
//     state (start/end time, topics, problems, seeks);
//   - each Plot's chart datasets (the points it draws: x, y, receive time);
//   - each 3D panel's renderer (its frames, render frame and errors).
// __probe.show(name) switches the app to the layout of that name, as a
// user picking a saved layout does: its panels subscribe then.
// __probe.openFile(url) opens the file at url (fetched from the page's
// server) as Studio's "Open local file" does: the File goes to the
// player selection's selectSource with the MCAP file source
// ("mcap-local-file"). __probe.seekStart() seeks to its start,
// __probe.play() plays it.
(() => {
  const S = window;
  const probe = {
    error: null,
    layouts: null,
    store: null,
    seeks: 0,
    lastSeekTime: undefined,
    // subscriber id → {topics: Set, all: Map topic→count,
    // sinceSeek: Map topic→count, seen: WeakSet}
    subs: new Map(),
    console: [],
  };
  S.__probe = probe;

  const ns = (t) => (t ? (BigInt(t.sec) * 1000000000n + BigInt(t.nsec)).toString() : null);

  // Every fiber of every React root on the page (the app's, and each
  // panel's own root).
  function* fibers() {
    for (const el of document.querySelectorAll('*')) {
      const root = el._reactRootContainer?._internalRoot?.current;
      if (!root) continue;
      const stack = [root];
      while (stack.length > 0) {
        const f = stack.pop();
        yield f;
        if (f.sibling) stack.push(f.sibling);
        if (f.child) stack.push(f.child);
      }
    }
  }
  function* hookStates(f) {
    for (let h = f.memoizedState; h && typeof h === 'object' && 'next' in h; h = h.next) yield h.memoizedState;
  }

  function findProviderValue(test) {
    for (const f of fibers()) {
      const v = f.memoizedProps?.value;
      if (v && typeof v === 'object' && test(v)) return v;
    }
    return undefined;
  }

  function entry(id) {
    let e = probe.subs.get(id);
    if (!e) {
      e = { topics: new Set(), all: new Map(), sinceSeek: new Map(), seen: new WeakSet() };
      probe.subs.set(id, e);
    }
    return e;
  }

  function watch(store) {
    probe.store = store;
    store.subscribe((state, prev) => {
      for (const [id, payloads] of state.subscriptionsById ?? []) {
        for (const p of payloads) entry(id).topics.add(p.topic);
      }
      const seek = state.public.playerState.activeData?.lastSeekTime;
      if (seek !== probe.lastSeekTime) {
        if (probe.lastSeekTime !== undefined) probe.seeks++;
        probe.lastSeekTime = seek;
        for (const e of probe.subs.values()) e.sinceSeek = new Map();
      }
      const m = state.public.messageEventsBySubscriberId;
      if (m === prev.public.messageEventsBySubscriberId) return;
      for (const [id, events] of m) {
        const e = entry(id);
        for (const ev of events) {
          if (e.seen.has(ev)) continue;
          e.seen.add(ev);
          e.all.set(ev.topic, (e.all.get(ev.topic) ?? 0) + 1);
          e.sinceSeek.set(ev.topic, (e.sinceSeek.get(ev.topic) ?? 0) + 1);
        }
      }
    });
  }

  // The pipeline store appears once the app has mounted its providers.
  const findStore = setInterval(() => {
    const store = findProviderValue((v) => typeof v.getState === 'function' && typeof v.subscribe === 'function' && v.getState()?.public?.playerState !== undefined);
    if (store) {
      clearInterval(findStore);
      watch(store);
    }
  }, 50);

  probe.show = async (name) => {
    const layout = findProviderValue((v) => typeof v.actions?.setSelectedLayoutId === 'function');
    if (!layout) throw new Error('no CurrentLayoutContext in the app');
    await layout.actions.setSelectedLayoutId(name);
  };

  probe.openFile = async (url) => {
    const sel = findProviderValue((v) => typeof v.selectSource === 'function' && Array.isArray(v.availableSources));
    if (!sel) throw new Error('no PlayerSelectionContext in the app');
    const blob = await (await fetch(url)).blob();
    const file = new File([blob], url.split('/').pop(), { type: 'application/octet-stream' });
    await sel.selectSource('mcap-local-file', { type: 'file', files: [file] });
  };

  // A file opens paused 99 ms after its start (Studio's IterablePlayer
  // shows the first data so): seekStart seeks back to the start, as a
  // user dragging the scrubber to its beginning, so that once played the
  // panels are handed every message; play presses play.
  const playback = () => {
    const pub = probe.store?.getState().public;
    const start = pub?.playerState.activeData?.startTime;
    if (!pub?.startPlayback || !pub.seekPlayback || !start) throw new Error('the player offers no playback control');
    return { pub, start };
  };
  probe.seekStart = () => {
    const { pub, start } = playback();
    pub.seekPlayback(start);
  };
  probe.play = () => playback().pub.startPlayback();

  function plots() {
    const out = [];
    for (const f of fibers()) {
      const p = f.memoizedProps;
      if (!p || !Array.isArray(p.datasets) || p.xAxisVal === undefined || !Array.isArray(p.paths)) continue;
      out.push({
        paths: p.paths.map((x) => x.value),
        xAxisVal: p.xAxisVal,
        defaultView: p.defaultView ?? null,
        datasets: p.datasets.map((d) => ({
          label: d.label ?? null,
          points: d.data.map((pt) => ({ x: pt.x, y: pt.y, receiveTime: ns(pt.receiveTime) })),
        })),
      });
    }
    return out;
  }

  function errorsOf(node, out = []) {
    for (const [id, msg] of node?.errorsById ?? []) out.push({ path: node.path.join(' > '), id, message: msg });
    for (const child of node?.children?.values() ?? []) errorsOf(child, out);
    return out;
  }

  function threeDees() {
    const out = [];
    for (const f of fibers()) {
      for (const s of hookStates(f)) {
        if (s && typeof s === 'object' && s.transformTree && s.settings?.errors) {
          out.push({
            frames: [...s.transformTree.frames().keys()].sort(),
            renderFrameId: s.renderFrameId ?? null,
            followFrameId: s.followFrameId ?? null,
            errors: errorsOf(s.settings.errors.errors),
          });
        }
      }
    }
    return out;
  }

  probe.report = () => {
    const st = probe.store?.getState();
    const ps = st?.public.playerState;
    const ad = ps?.activeData;
    const count = (m) => Object.fromEntries([...m].sort());
    return {
      error: probe.error,
      connected: ps?.presence ?? null,
      name: ps?.name ?? null,
      startTime: ns(ad?.startTime),
      endTime: ns(ad?.endTime),
      currentTime: ns(ad?.currentTime),
      seeks: probe.seeks,
      topics: (ad?.topics ?? []).map((t) => ({ name: t.name, schemaName: t.schemaName })),
      topicStats: Object.fromEntries([...(ad?.topicStats ?? [])].map(([k, v]) => [k, v.numMessages])),
      problems: (ps?.problems ?? []).map((p) => ({ severity: p.severity, message: p.message, tip: p.tip ?? null })),
      subscribers: [...probe.subs].map(([id, e]) => ({ id, topics: [...e.topics].sort(), received: count(e.all), sinceSeek: count(e.sinceSeek) })),
      plots: plots(),
      threeDees: threeDees(),
    };
  };

  (async () => {
    probe.layouts = await (await fetch('/layout.json')).json();
    await S.initI18n();
    const config = new Map();
    const appConfiguration = {
      get: (k) => config.get(k),
      set: async (k, v) => { config.set(k, v); },
      addChangeListener() {},
      removeChangeListener() {},
    };
    const stored = new Map(Object.entries(probe.layouts).map(([id, data]) => [id, {
      id, name: id, permission: 'CREATOR_WRITE',
      baseline: { data, savedAt: new Date(0).toISOString() },
      working: undefined, syncInfo: undefined,
    }]));
    const layoutStorage = {
      list: async () => [...stored.values()],
      get: async (_ns, id) => stored.get(id),
      put: async (_ns, l) => { stored.set(l.id, l); return l; },
      delete: async (_ns, id) => { stored.delete(id); },
      importLayouts: async () => {},
    };
    ReactDOM.render(React.createElement(S.App, {
      deepLinks: [window.location.href],
      appConfiguration,
      dataSources: [new S.FoxgloveWebSocketDataSourceFactory(), new S.McapLocalDataSourceFactory()],
      layoutStorage,
      extensionLoaders: [],
      enableGlobalCss: true,
    }), document.getElementById('root'));
  })().catch((e) => { probe.error = String(e?.stack ?? e); });
})();
