#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Checks the YAML of deploy/ and examples/ for tests/scripts/test_manifests.sh.
//
//   node check.cjs ROOT PLUGIN RENDER_DIR
//
// ROOT is the repository, PLUGIN the ascend-device-plugin binary, RENDER_DIR
// holds `kubectl kustomize` output: deploy.yaml for deploy/ and <name>.yaml
// for deploy/overlays/<name>/. Prints one line per check, "ok <what>" or
// "FAIL <what>: <why>", and exits 1 if any check failed.
//
// The checks:
// - every YAML file parses, as YAML 1.1 like the API server's parser
//   (so "yes" is a boolean), with no duplicate keys;
// - every object validates against the Kubernetes API schemas of the npm
//   package kubernetes-models, and has no field the schema does not know
//   (a misspelt field is silently dropped by a lenient client): the objects
//   of every file but the kustomizations and the patches they name, and the
//   rendered ones;
// - the DaemonSet of deploy/ and of every overlay keeps the project's rules
//   (invariants below) and each overlay changes what it says it changes;
// - the example workloads request NPUs the way the plugin serves them.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const YAML = require('yaml');

const [root, plugin, renderDir] = process.argv.slice(2);
if (!root || !plugin || !renderDir) {
	console.error('usage: node check.cjs ROOT PLUGIN RENDER_DIR');
	process.exit(2);
}

let failures = 0;
function ok(what) {
	console.log(`ok ${what}`);
}
function fail(what, why) {
	failures++;
	console.log(`FAIL ${what}: ${why}`);
}
// Runs one named check: fn returns nothing when it holds, or throws/returns a
// string saying why not.
function check(what, fn) {
	let why;
	try {
		why = fn();
	} catch (e) {
		why = e.message;
	}
	if (why) fail(what, why);
	else ok(what);
}
function assert(cond, why) {
	if (!cond) throw new Error(why);
}
const show = (v) => JSON.stringify(v);

// ---- parsing ----------------------------------------------------------------

// Multi-document YAML, as the API server reads it. Returns [{doc, index}].
function parseFile(file) {
	const text = fs.readFileSync(file, 'utf8');
	const docs = YAML.parseAllDocuments(text, { version: '1.1', uniqueKeys: true, prettyErrors: true });
	const out = [];
	docs.forEach((doc, index) => {
		const problems = [...doc.errors, ...doc.warnings];
		if (problems.length) throw new Error(problems.map((p) => p.message).join('; '));
		const value = doc.toJS();
		if (value !== null && value !== undefined) out.push({ value, index });
	});
	return out;
}

// The Helm chart's files are templates and values, not objects: its
// renders are proven the same as deploy/'s by tests/scripts/test_helm.sh,
// so these checks reach them through deploy/.
const HELM_CHARTS = path.join('deploy', 'helm');

function yamlFiles(dir) {
	const out = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, entry.name);
		if (entry.isDirectory() && path.relative(root, p) === HELM_CHARTS) continue;
		if (entry.isDirectory()) out.push(...yamlFiles(p));
		else if (/\.ya?ml$/.test(entry.name)) out.push(p);
	}
	return out.sort();
}

const rel = (p) => path.relative(root, p);

// ---- schema validation --------------------------------------------------------

// The kubernetes-models class for apiVersion/kind, or null.
function modelFor(apiVersion, kind) {
	if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !/^[A-Za-z0-9]+$/.test(kind)) return null;
	try {
		// "v1" (the core group) or "group/version" is the package's directory.
		const mod = require(`kubernetes-models/${apiVersion}/${kind}`);
		const cls = mod[kind];
		return cls && cls.apiVersion === apiVersion && cls.kind === kind ? cls : null;
	} catch {
		return null;
	}
}

// Wraps an object so that every property the validator reads is recorded;
// the properties it never read are the ones the schema does not know.
function tracked(value, where, seen) {
	if (value === null || typeof value !== 'object') return value;
	const read = new Set();
	const children = new Map();
	seen.push({ where, value, read });
	return new Proxy(value, {
		get(target, prop) {
			const v = target[prop];
			if (typeof prop !== 'string' || !Object.prototype.hasOwnProperty.call(target, prop)) return v;
			read.add(prop);
			if (!children.has(prop)) children.set(prop, tracked(v, `${where}/${prop}`, seen));
			return children.get(prop);
		},
		has(target, prop) {
			if (typeof prop === 'string') read.add(prop);
			return prop in target;
		},
		getOwnPropertyDescriptor(target, prop) {
			if (typeof prop === 'string') read.add(prop);
			return Object.getOwnPropertyDescriptor(target, prop);
		},
	});
}

// Kinds that kubernetes-models 4.5.1 has no schema for (resource.k8s.io
// came after it), named one by one: their schema check is the real API
// server's, `kubectl apply --dry-run=server --validate=strict` of every
// object of deploy/dra and examples/dra in the e2e step "dra"
// (tests/cluster/e2e.sh). Any other kind without a schema still fails.
const SERVER_VALIDATED = new Set([
	'resource.k8s.io/v1 DeviceClass',
	'resource.k8s.io/v1 ResourceClaim',
	'resource.k8s.io/v1 ResourceClaimTemplate',
	'resource.k8s.io/v1 ResourceSlice',
]);
const serverValidated = (o) => SERVER_VALIDATED.has(`${o.apiVersion} ${o.kind}`) && !modelFor(o.apiVersion, o.kind);

// Problems of one object against its schema, or [] when it is valid.
function schemaProblems(obj) {
	const cls = modelFor(obj.apiVersion, obj.kind);
	if (!cls) return [`no Kubernetes API schema for apiVersion ${show(obj.apiVersion)} kind ${show(obj.kind)}`];
	const seen = [];
	const problems = [];
	try {
		cls.prototype.validate.call(tracked(obj, '', seen));
	} catch (e) {
		problems.push(e.message);
	}
	for (const { where, value, read } of seen) {
		if (Array.isArray(value)) continue;
		for (const key of Object.keys(value)) {
			if (!read.has(key)) problems.push(`unknown field ${where}/${key}`);
		}
	}
	return problems;
}

function objName(o) {
	return `${o.kind}/${o.metadata && o.metadata.name}`;
}

// ---- the plugin's command line ---------------------------------------------------

const help = spawnSync(plugin, ['--help'], { encoding: 'utf8' });
if (help.status !== 0) {
	console.error(`cannot run ${plugin} --help`);
	process.exit(2);
}
const knownFlags = new Set([...help.stdout.matchAll(/^\s+--([a-z][a-z-]*)/gm)].map((m) => m[1]));
const version = spawnSync(plugin, ['--version'], { encoding: 'utf8' }).stdout.trim().split(' ').pop();

// The defaults, as --help states them ("(default X)").
const DEFAULTS = Object.fromEntries(
	[...help.stdout.matchAll(/^\s+--([a-z][a-z-]*) \S+ .*\(default ([^,\s)]+)\)$/gm)].map((m) => [m[1], m[2]]),
);

// --flag=value / --flag value / --switch into a map (defaults, then the
// --config file's flags, filled in: the command line wins over the file).
function parseArgs(args, fileFlags = {}) {
	const flags = { ...DEFAULTS, ...fileFlags };
	const switches = new Set();
	for (let i = 0; i < args.length; i++) {
		const m = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(args[i]);
		assert(m, `argument ${show(args[i])} is not a --flag`);
		if (m[2] !== undefined) flags[m[1]] = m[2];
		else if (['probe', 'help', 'version'].includes(m[1])) switches.add(m[1]);
		else flags[m[1]] = args[++i];
	}
	return { flags, switches };
}

// Many variants share command lines: each distinct one is run once.
const verdicts = new Map();

// The flags must exist in --help, and the binary must accept them with their
// values (it parses and validates everything before acting on --version).
// configFile maps the --config path in the pod to a copy of the ConfigMap's
// file here, so that the binary reads and validates the file it would get.
function checkCommandLine(args, env, configFile) {
	for (const a of args) {
		const m = /^--([a-z][a-z-]*)/.exec(a);
		if (m) assert(knownFlags.has(m[1]), `--${m[1]} is not a flag of ascend-device-plugin (see --help)`);
	}
	if (configFile) args = args.map((a) => (a === `--config=${configFile.pod}` ? `--config=${configFile.local}` : a));
	const key = show([args, env.ASCEND_DRIVER_PATH]);
	if (!verdicts.has(key)) {
		const runEnv = { ...process.env };
		delete runEnv.ASCEND_DRIVER_PATH;
		if (env.ASCEND_DRIVER_PATH !== undefined) runEnv.ASCEND_DRIVER_PATH = env.ASCEND_DRIVER_PATH;
		const r = spawnSync(plugin, [...args, '--version'], { encoding: 'utf8', env: runEnv });
		verdicts.set(key, r.status === 0 ? '' : `ascend-device-plugin rejects ${show(args)}: ${(r.stderr || '').split('\n')[0]}`);
	}
	assert(!verdicts.get(key), verdicts.get(key));
}

const joinRoot = (hostRoot, p) => (hostRoot === '/' ? p : hostRoot.replace(/\/+$/, '') + p);

// ---- the DaemonSet --------------------------------------------------------------

const BIN = '/usr/local/bin/ascend-device-plugin';

// What each overlay is for; a new overlay needs an entry here.
const OVERLAYS = {
	deploy: { resource: 'ascend.com/npu', socketDir: '/var/lib/kubelet/device-plugins', driver: '/usr/local/Ascend/driver', interval: '5s', backend: 'auto', strategy: 'native' },
	'resource-name': { resource: 'huawei.com/Ascend910' },
	'driver-path': { driver: '/opt/Ascend/driver' },
	'health-interval': { interval: '2s' },
	'kubelet-dir': { socketDir: '/data/kubelet/device-plugins', podResources: '/data/kubelet/pod-resources' },
	devfs: { backend: 'devfs', privileged: false },
	config: { configFile: '/etc/ascend-device-plugin/config.yaml' },
	'host-tools': { extraMounts: ['/usr/local/dcmi', '/usr/local/bin/npu-smi', '/etc/ascend_install.info'] },
	cdi: { strategy: 'cdi' },
	'metrics-networkpolicy': { networkPolicy: true },
};

function toleratesNpuTaint(spec) {
	return (spec.tolerations || []).some(
		(t) =>
			t.key === 'ascend.com/npu' &&
			(t.operator === 'Exists' || (t.operator === 'Equal' && t.value === 'true') || (!t.operator && t.value === 'true')) &&
			(!t.effect || t.effect === 'NoSchedule'),
	);
}

function checkDaemonSet(variant, objects) {
	const want = { ...OVERLAYS.deploy, privileged: true, extraMounts: [], ...OVERLAYS[variant] };
	const what = (s) => `${variant}: ${s}`;
	check(what('has an entry in check.cjs OVERLAYS'), () => assert(OVERLAYS[variant], 'add what this overlay changes to OVERLAYS'));

	const forbidden = objects.filter((o) => /^(ServiceAccount|Secret|Role|ClusterRole|RoleBinding|ClusterRoleBinding)$/.test(o.kind));
	check(what('no ServiceAccount, RBAC or Secret (the plugin needs no API access)'), () =>
		assert(forbidden.length === 0, `found ${forbidden.map(objName).join(', ')}`),
	);
	const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
	check(what(want.networkPolicy ? 'a NetworkPolicy admits only the metrics port, from one namespace' : 'no NetworkPolicy'), () => {
		if (!want.networkPolicy) {
			assert(policies.length === 0, `found ${policies.map(objName).join(', ')}`);
			return;
		}
		assert(policies.length === 1, `${policies.length} NetworkPolicies`);
		const ds = objects.find((o) => o.kind === 'DaemonSet');
		const np = policies[0];
		const podLabels = ds.spec.template.metadata.labels;
		const sel = np.spec.podSelector.matchLabels || {};
		assert(Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => podLabels[k] === v), `podSelector ${show(np.spec.podSelector)}`);
		assert(np.metadata.namespace === ds.metadata.namespace, `NetworkPolicy in ${np.metadata.namespace}`);
		const port = ds.spec.template.spec.containers[0].ports.find((p) => p.name === 'metrics').containerPort;
		const rules = np.spec.ingress || [];
		assert(show(np.spec.policyTypes) === show(['Ingress']), `policyTypes ${show(np.spec.policyTypes)}`);
		assert(rules.length === 1 && (rules[0].ports || []).length === 1 && rules[0].ports[0].port === port && rules[0].ports[0].protocol === 'TCP', `ingress ${show(rules)}`);
		assert((rules[0].from || []).length === 1 && rules[0].from[0].namespaceSelector, `from ${show(rules[0].from)}`);
	});

	const sets = objects.filter((o) => o.kind === 'DaemonSet');
	check(what('exactly one DaemonSet'), () => assert(sets.length === 1, `found ${sets.length}`));
	if (sets.length !== 1) return;
	const ds = sets[0];
	const pod = ds.spec.template.spec;
	const labels = ds.spec.template.metadata.labels || {};
	const c = pod.containers[0];
	const env = Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
	const mounts = c.volumeMounts || [];
	const volumes = Object.fromEntries((pod.volumes || []).map((v) => [v.name, v]));
	const sc = c.securityContext || {};

	check(what('namespace kube-system'), () => assert(ds.metadata.namespace === 'kube-system', `namespace ${show(ds.metadata.namespace)}`));
	check(what('pods labelled name=ascend-device-plugin and selected by it'), () => {
		assert(labels.name === 'ascend-device-plugin', `template labels ${show(labels)}`);
		assert(show(ds.spec.selector.matchLabels) === show({ name: 'ascend-device-plugin' }), `selector ${show(ds.spec.selector)}`);
	});
	check(what('runs only on nodes labelled npu=true'), () =>
		assert(pod.nodeSelector && pod.nodeSelector.npu === 'true', `nodeSelector ${show(pod.nodeSelector)}`),
	);
	check(what('tolerates ascend.com/npu=true:NoSchedule and CriticalAddonsOnly'), () => {
		assert(toleratesNpuTaint(pod), `tolerations ${show(pod.tolerations)}`);
		assert((pod.tolerations || []).some((t) => t.key === 'CriticalAddonsOnly' && t.operator === 'Exists'), 'no CriticalAddonsOnly toleration');
	});
	check(what('priorityClassName system-node-critical'), () => assert(pod.priorityClassName === 'system-node-critical', show(pod.priorityClassName)));
	check(what('a surge roll, one node at a time, each pod on sockets named by its UID'), () => {
		const u = ds.spec.updateStrategy || {};
		assert(u.type === 'RollingUpdate', `updateStrategy ${show(u)}`);
		const r = u.rollingUpdate || {};
		assert(r.maxSurge === 1 && r.maxUnavailable === 0, `rollingUpdate ${show(r)}: the new pod must start before the old one stops`);
		const inst = (c.env || []).find((e) => e.name === 'ASCEND_PLUGIN_INSTANCE');
		assert(inst && inst.valueFrom && inst.valueFrom.fieldRef && inst.valueFrom.fieldRef.fieldPath === 'metadata.uid',
			`ASCEND_PLUGIN_INSTANCE ${show(inst)}: two pods of a node would serve the same socket`);
	});
	check(what('no ServiceAccount token'), () => assert(pod.automountServiceAccountToken === false, show(pod.automountServiceAccountToken)));
	check(what('no host network, PID or IPC namespace'), () =>
		assert(!pod.hostNetwork && !pod.hostPID && !pod.hostIPC, 'hostNetwork/hostPID/hostIPC set'),
	);
	check(what('one container running the image of this version'), () => {
		assert(pod.containers.length === 1, `${pod.containers.length} containers`);
		assert(c.image.endsWith(`:${version}`), `image ${c.image}, project version ${version}`);
		assert(show(c.command) === show([BIN]), `command ${show(c.command)}, the Dockerfile installs ${BIN}`);
	});

	const args = c.args || [];
	// --config: the ConfigMap mounted where it points; its flags count below
	// the arguments'.
	const configArgs = args.filter((a) => /^--config(=|$)/.test(a));
	let configFile;
	let fileFlags = {};
	check(what(want.configFile ? `--config=${want.configFile}, a ConfigMap of the render mounted read-only` : 'no --config'), () => {
		if (!want.configFile) {
			assert(configArgs.length === 0, `${show(configArgs)} without a configFile in its OVERLAYS entry`);
			return;
		}
		assert(show(configArgs) === show([`--config=${want.configFile}`]), `args ${show(args)}`);
		const dir = path.posix.dirname(want.configFile);
		const m = mounts.find((x) => x.mountPath === dir);
		assert(m && m.readOnly === true, `no read-only mount at ${dir}`);
		const cmName = volumes[m.name] && volumes[m.name].configMap && volumes[m.name].configMap.name;
		const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === cmName);
		assert(cm, `volume ${show(volumes[m.name])} names no ConfigMap of the render`);
		assert(cm.metadata.namespace === ds.metadata.namespace, `ConfigMap in ${cm.metadata.namespace}`);
		const text = (cm.data || {})[path.posix.basename(want.configFile)];
		assert(typeof text === 'string', `ConfigMap ${cmName} has no key ${path.posix.basename(want.configFile)}`);
		const doc = YAML.parse(text, { version: '1.1', uniqueKeys: true }) || {};
		for (const [k, v] of Object.entries(doc.flags || {})) fileFlags[k.replace(/[A-Z]/g, (u) => `-${u.toLowerCase()}`)] = String(v);
		const tmp = fs.mkdtempSync(path.join(require('os').tmpdir(), 'check-config-'));
		process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
		const local = path.join(tmp, 'config.yaml');
		fs.writeFileSync(local, text);
		configFile = { pod: want.configFile, local };
	});
	check(what('container args are flags of the binary, with valid values'), () => checkCommandLine(args, env, configFile));
	const { flags } = parseArgs(args, fileFlags);
	const driverPath = env.ASCEND_DRIVER_PATH || flags['driver-path'];
	check(what(`resource name ${want.resource}`), () => assert(flags['resource-name'] === want.resource, flags['resource-name']));
	check(what(`health interval ${want.interval}`), () => assert(flags['health-interval'] === want.interval, flags['health-interval']));
	check(what(`backend ${want.backend}`), () => assert(flags.backend === want.backend, flags.backend));
	check(what(`device-list strategy ${want.strategy}`), () =>
		assert(flags['device-list-strategy'] === want.strategy, flags['device-list-strategy']),
	);

	const mountAt = (p) => mounts.find((m) => m.mountPath === p);
	const hostPathOf = (m) => m && volumes[m.name] && volumes[m.name].hostPath;
	check(what(`device-plugins dir ${want.socketDir} mounted read-write at --socket-dir`), () => {
		assert(flags['socket-dir'] === want.socketDir, `--socket-dir ${flags['socket-dir']}`);
		const m = mountAt(want.socketDir);
		assert(m && !m.readOnly, `no read-write mount at ${want.socketDir}`);
		const hp = hostPathOf(m);
		assert(hp && hp.path === want.socketDir && hp.type === 'Directory', `volume ${show(hp)}`);
	});
	check(what(`driver ${want.driver}: hostPath, read-only mount and ASCEND_DRIVER_PATH agree`), () => {
		assert(env.ASCEND_DRIVER_PATH === want.driver, `ASCEND_DRIVER_PATH ${show(env.ASCEND_DRIVER_PATH)}`);
		const m = mountAt(joinRoot(flags['host-root'], driverPath));
		assert(m && m.readOnly === true, `no read-only mount at ${joinRoot(flags['host-root'], driverPath)}`);
		const hp = hostPathOf(m);
		assert(hp && hp.path === want.driver && hp.type === 'Directory', `volume ${show(hp)}`);
		const ld = (env.LD_LIBRARY_PATH || '').replace(/\$\(ASCEND_DRIVER_PATH\)/g, driverPath);
		assert(ld.split(':').includes(joinRoot(flags['host-root'], `${driverPath}/lib64/driver`)), `LD_LIBRARY_PATH ${show(env.LD_LIBRARY_PATH)} misses the driver's lib64/driver`);
	});
	check(what("the host's /dev is visible at --dev-dir"), () => {
		const hp = hostPathOf(mountAt(flags['dev-dir']));
		assert(hp && hp.path === '/dev', `--dev-dir ${flags['dev-dir']} is not a mount of the host's /dev`);
	});
	check(what(want.privileged ? 'privileged (DCMI opens device nodes)' : 'unprivileged, no capabilities'), () => {
		if (want.privileged) {
			assert(sc.privileged === true, 'not privileged: DCMI could not open the device nodes');
		} else {
			assert(!sc.privileged && sc.allowPrivilegeEscalation === false, `securityContext ${show(sc)}`);
			assert(show((sc.capabilities || {}).drop) === show(['ALL']), `capabilities ${show(sc.capabilities)}`);
		}
		assert(sc.privileged !== true || flags.backend !== 'devfs', 'privileged although the backend needs no device access');
		assert(sc.privileged === true || flags.backend === 'devfs', `backend ${flags.backend} needs DCMI, which needs privileged`);
	});
	check(what('read-only root filesystem'), () => assert(sc.readOnlyRootFilesystem === true, show(sc)));
	check(what('requests cpu and memory, limits memory'), () => {
		const r = c.resources || {};
		const req = r.requests || {};
		const lim = r.limits || {};
		assert(req.cpu && req.memory && lim.memory, `resources ${show(r)}`);
		const mi = (q) => {
			const m = /^(\d+)(Mi|Gi)$/.exec(q);
			assert(m, `memory ${q} is not in Mi or Gi`);
			return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
		};
		assert(mi(req.memory) <= mi(lim.memory), `memory request ${req.memory} above limit ${lim.memory}`);
	});
	for (const kind of ['livenessProbe', 'readinessProbe']) {
		check(what(`${kind} runs --probe on the daemon's socket`), () => {
			const p = c[kind];
			assert(p && p.exec && Array.isArray(p.exec.command), `no exec ${kind}`);
			const [bin, ...pargs] = p.exec.command;
			assert(bin === BIN, `runs ${bin}`);
			checkCommandLine(pargs, env, configFile);
			// The file may rename the socket (time-slicing's renameByDefault):
			// the probes must read the daemon's file, and only that one.
			const probeConfig = pargs.filter((a) => /^--config(=|$)/.test(a));
			assert(show(probeConfig) === show(configArgs), `${show(probeConfig)}, the daemon's is ${show(configArgs)}`);
			const probe = parseArgs(pargs);
			assert(probe.switches.has('probe'), 'no --probe');
			for (const f of ['socket-dir', 'resource-name']) {
				assert(probe.flags[f] === flags[f], `--${f} ${probe.flags[f]}, the daemon's is ${flags[f]}`);
			}
			assert((p.timeoutSeconds || 1) > 2, `timeoutSeconds ${p.timeoutSeconds} is not above the probe's own 2 s deadline`);
		});
	}
	if (flags['device-list-strategy'].split(',').includes('cdi')) {
		check(what(`the CDI spec directory ${flags['cdi-dir']} is the host's, mounted read-write`), () => {
			const m = mountAt(flags['cdi-dir']);
			const hp = hostPathOf(m);
			assert(m && !m.readOnly, `no read-write mount at --cdi-dir ${flags['cdi-dir']}`);
			assert(hp && hp.path === flags['cdi-dir'] && (hp.type === 'DirectoryOrCreate' || hp.type === 'Directory'), `volume ${show(hp)}`);
		});
	}
	// Observability (docs/metrics.md): the port the daemon serves metrics on
	// is a named container port; the pod resources socket's directory and
	// the NFD features directory are the host's.
	if (flags['metrics-addr']) {
		check(what(`metrics port of --metrics-addr ${flags['metrics-addr']} is the container port "metrics"`), () => {
			const port = Number(flags['metrics-addr'].slice(flags['metrics-addr'].lastIndexOf(':') + 1));
			const ports = c.ports || [];
			assert(ports.some((p) => p.name === 'metrics' && p.containerPort === port && (p.protocol || 'TCP') === 'TCP'), `ports ${show(ports)}`);
		});
	}
	if (flags['pod-resources-socket']) {
		const dir = path.posix.dirname(flags['pod-resources-socket']);
		check(what(`the kubelet's pod resources directory ${dir} is the host's`), () => {
			const wantDir = want.podResources || '/var/lib/kubelet/pod-resources';
			assert(dir === wantDir, `--pod-resources-socket ${flags['pod-resources-socket']}, the kubelet's is under ${wantDir}`);
			const m = mountAt(dir);
			const hp = hostPathOf(m);
			assert(m && hp && hp.path === dir && (hp.type === 'Directory' || hp.type === 'DirectoryOrCreate'), `mount ${show(m)}, volume ${show(hp)}`);
		});
	}
	if (flags['nfd-features-file']) {
		const dir = path.posix.dirname(flags['nfd-features-file']);
		check(what(`the NFD features directory ${dir} is the host's, mounted read-write`), () => {
			const m = mountAt(dir);
			const hp = hostPathOf(m);
			assert(m && !m.readOnly, `no read-write mount at ${dir}`);
			assert(hp && hp.path === dir && (hp.type === 'Directory' || hp.type === 'DirectoryOrCreate'), `volume ${show(hp)}`);
		});
	}
	// The record of separated chips must outlive the pod and the node's
	// reboots: the plugin's --state-dir is a directory of the host.
	const stateDir = flags['state-dir'] || '/var/lib/ascend-device-plugin';
	check(what(`--state-dir ${stateDir} is the host's, mounted read-write`), () => {
		const m = mountAt(stateDir);
		const hp = hostPathOf(m);
		assert(m && !m.readOnly, `no read-write mount at ${stateDir}`);
		assert(hp && hp.path === stateDir && hp.type === 'DirectoryOrCreate', `volume ${show(hp)}`);
	});
	for (const p of want.extraMounts) {
		check(what(`${p} visible to the plugin (typed hostPath, read-only)`), () => {
			const m = mountAt(joinRoot(flags['host-root'], p));
			const hp = hostPathOf(m);
			assert(m && m.readOnly && hp && hp.path === p && hp.type, `mount ${show(m)}, volume ${show(hp)}`);
		});
	}
}

// ---- the examples ------------------------------------------------------------------

function podSpecs(o) {
	if (o.kind === 'Pod') return [{ spec: o.spec, labels: (o.metadata || {}).labels || {} }];
	if (o.spec && o.spec.template) return [{ spec: o.spec.template.spec, labels: o.spec.template.metadata.labels || {} }];
	return [];
}

function npuLimit(c) {
	const r = c.resources || {};
	return (r.limits || {})[OVERLAYS.deploy.resource];
}

// A DRA example pod asks through claims, not ascend.com/npu: each claim a
// container names is one of the pod's, made from a ResourceClaim or
// template of the same file whose requests name a DeviceClass of deploy/dra.
function checkDraPod(what, spec, objects, classes) {
	check(`${what}: its containers' claims come from the file and name DeviceClasses of deploy/dra`, () => {
		const podClaims = Object.fromEntries((spec.resourceClaims || []).map((c) => [c.name, c]));
		const used = spec.containers.flatMap((c) => ((c.resources || {}).claims || []).map((x) => x.name));
		assert(used.length > 0, 'no container names a claim');
		for (const c of spec.containers) assert(npuLimit(c) === undefined, `container ${c.name} asks for ${OVERLAYS.deploy.resource} too`);
		for (const name of used) {
			const pc = podClaims[name];
			assert(pc, `a container names claim ${show(name)}, which spec.resourceClaims lacks`);
			const src = pc.resourceClaimTemplateName
				? objects.find((o) => o.kind === 'ResourceClaimTemplate' && o.metadata.name === pc.resourceClaimTemplateName)
				: objects.find((o) => o.kind === 'ResourceClaim' && o.metadata.name === pc.resourceClaimName);
			assert(src, `claim ${show(name)} names ${show(pc)}, not in the file`);
			const devices = (src.kind === 'ResourceClaimTemplate' ? src.spec.spec : src.spec).devices;
			for (const r of devices.requests) {
				const cls = (r.exactly || {}).deviceClassName;
				assert(classes.has(cls), `request ${r.name}: DeviceClass ${show(cls)} is not in deploy/dra (${[...classes].join(', ')})`);
			}
		}
	});
}

function checkExamples(objectsByFile, classes) {
	for (const [file, objects] of Object.entries(objectsByFile)) {
		for (const o of objects) {
			for (const { spec } of podSpecs(o)) {
				const what = `${file} ${objName(o)}`;
				if (spec.resourceClaims) {
					checkDraPod(what, spec, objects, classes);
					check(`${what}: tolerates the NPU taint`, () => assert(toleratesNpuTaint(spec), show(spec.tolerations)));
					continue;
				}
				const npus = spec.containers.filter((c) => npuLimit(c) !== undefined || ((c.resources || {}).requests || {})[OVERLAYS.deploy.resource]);
				check(`${what}: asks for ${OVERLAYS.deploy.resource} in limits, as a whole number`, () => {
					assert(npus.length > 0, `no container asks for ${OVERLAYS.deploy.resource}`);
					for (const c of npus) assert(/^[1-9][0-9]*$/.test(String(npuLimit(c))), `container ${c.name}: limits ${show(c.resources)}`);
				});
				check(`${what}: tolerates the NPU taint`, () => assert(toleratesNpuTaint(spec), show(spec.tolerations)));
			}
		}
	}

	const deployment = (objectsByFile['examples/inference-deployment.yaml'] || []).find((o) => o.kind === 'Deployment');
	const service = (objectsByFile['examples/inference-deployment.yaml'] || []).find((o) => o.kind === 'Service');
	check('inference-deployment: node affinity to npu=true, spread over hostnames', () => {
		assert(deployment, 'no Deployment');
		const spec = deployment.spec.template.spec;
		const labels = deployment.spec.template.metadata.labels;
		const terms = spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
		assert(
			terms.every((t) => t.matchExpressions.some((e) => e.key === 'npu' && e.operator === 'In' && show(e.values) === show(['true']))),
			`node affinity ${show(terms)}`,
		);
		const anti = spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
		assert(anti.length > 0, 'no preferred pod anti-affinity');
		for (const a of anti) {
			const t = a.podAffinityTerm;
			assert(t.topologyKey === 'kubernetes.io/hostname', `topologyKey ${t.topologyKey}`);
			for (const e of t.labelSelector.matchExpressions) {
				assert(e.operator === 'In' && e.values.includes(labels[e.key]), `anti-affinity selector ${show(e)} does not select the replicas ${show(labels)}`);
			}
		}
		assert(deployment.spec.replicas >= 2, 'fewer than 2 replicas to spread');
	});
	check('inference-deployment: the Service selects the replicas and targets a container port', () => {
		assert(service, 'no Service');
		const labels = deployment.spec.template.metadata.labels;
		for (const [k, v] of Object.entries(service.spec.selector)) assert(labels[k] === v, `selector ${k}=${v} does not match ${show(labels)}`);
		const ports = deployment.spec.template.spec.containers.flatMap((c) => c.ports || []);
		for (const p of service.spec.ports) {
			assert(ports.some((cp) => cp.name === p.targetPort || cp.containerPort === p.targetPort), `targetPort ${p.targetPort} is no container port`);
		}
	});
	const jobOf = (name) => (objectsByFile[`examples/${name}.yaml`] || []).find((o) => o.kind === 'Job');
	for (const name of ['npu-smoke-test', 'npu-smoke-test-nonroot']) {
		const job = jobOf(name);
		check(`${name}: a Job that fails at once and gives up when it cannot be scheduled`, () => {
			assert(job, 'no Job');
			const spec = job.spec.template.spec;
			assert(job.spec.backoffLimit === 0, `backoffLimit ${job.spec.backoffLimit}`);
			assert(job.spec.activeDeadlineSeconds > 0, 'no activeDeadlineSeconds');
			assert(spec.restartPolicy === 'Never', `restartPolicy ${spec.restartPolicy}`);
			const c = spec.containers[0];
			const expected = (c.env || []).find((e) => e.name === 'EXPECTED_NPUS');
			assert(expected && expected.value === String(npuLimit(c)), `EXPECTED_NPUS ${show(expected)} differs from the limit ${npuLimit(c)}`);
		});
	}
	check('npu-smoke-test-nonroot: runs as a non-root user and group with a supplementary group, no privilege', () => {
		const job = jobOf('npu-smoke-test-nonroot');
		assert(job, 'no Job');
		const spec = job.spec.template.spec;
		const pod = spec.securityContext || {};
		const c = spec.containers[0];
		const sc = c.securityContext || {};
		const effective = (k) => (sc[k] !== undefined ? sc[k] : pod[k]);
		assert(effective('runAsNonRoot') === true, `runAsNonRoot ${show(effective('runAsNonRoot'))}`);
		assert(effective('runAsUser') > 0, `runAsUser ${show(effective('runAsUser'))}`);
		assert(effective('runAsGroup') > 0, `runAsGroup ${show(effective('runAsGroup'))}`);
		const groups = pod.supplementalGroups || [];
		assert(groups.length > 0 && groups.every((g) => g > 0), `supplementalGroups ${show(groups)}`);
		assert(sc.allowPrivilegeEscalation === false, `allowPrivilegeEscalation ${show(sc.allowPrivilegeEscalation)}`);
		assert(!sc.privileged, 'privileged');
	});
	check('npu-smoke-test-nonroot: the same script as npu-smoke-test', () => {
		const a = jobOf('npu-smoke-test');
		const b = jobOf('npu-smoke-test-nonroot');
		assert(a && b, 'a Job is missing');
		const script = (j) => show(j.spec.template.spec.containers[0].command);
		assert(script(a) === script(b), 'the commands differ');
	});
}

// ---- main ---------------------------------------------------------------------------

const sources = [...yamlFiles(path.join(root, 'deploy')), ...yamlFiles(path.join(root, 'examples'))];
const objectsByFile = {};
for (const file of sources) {
	check(`${rel(file)} parses`, () => {
		objectsByFile[rel(file)] = parseFile(file).map((d) => d.value);
	});
}

// The overlays' patch files (patchesStrategicMerge, patchesJson6902 and
// patches), relative to the root like objectsByFile's keys.
const patchFiles = new Set();
for (const [file, objects] of Object.entries(objectsByFile)) {
	if (path.basename(file) !== 'kustomization.yaml') continue;
	const add = (p) => typeof p === 'string' && patchFiles.add(path.join(path.dirname(file), p));
	for (const k of objects) {
		for (const p of k.patchesStrategicMerge || []) add(p);
		for (const p of [...(k.patchesJson6902 || []), ...(k.patches || [])]) add(p && p.path);
	}
}

for (const [file, objects] of Object.entries(objectsByFile)) {
	// Kustomizations and their patches are kustomize's input, checked by
	// rendering them; a patch no kustomization names is checked as an object.
	if (path.basename(file) === 'kustomization.yaml' || patchFiles.has(file)) continue;
	for (const o of objects) {
		if (serverValidated(o)) {
			ok(`${file} ${objName(o)}: ${o.apiVersion} ${o.kind} has no schema here; the API server validates it (e2e step dra)`);
			continue;
		}
		check(`${file} ${objName(o)} matches the Kubernetes API schema`, () => schemaProblems(o).join('; '));
	}
}

const renders = fs.readdirSync(renderDir).filter((f) => f.endsWith('.yaml')).sort();
check('deploy/ and every overlay rendered', () => assert(renders.includes('deploy.yaml') && renders.length === 1 + fs.readdirSync(path.join(root, 'deploy/overlays')).length, `rendered: ${renders.join(' ')}`));
for (const f of renders) {
	const variant = f.replace(/\.yaml$/, '');
	let objects = [];
	check(`${variant}: rendered output parses`, () => {
		objects = parseFile(path.join(renderDir, f)).map((d) => d.value);
	});
	for (const o of objects) check(`${variant}: ${objName(o)} matches the Kubernetes API schema`, () => schemaProblems(o).join('; '));
	checkDaemonSet(variant, objects);
	if (variant === 'deploy') {
		check('kubectl kustomize deploy/ renders deploy/base/ascend-device-plugin.yaml unchanged', () => {
			const plain = objectsByFile['deploy/base/ascend-device-plugin.yaml'];
			assert(show(sortKeys(plain)) === show(sortKeys(objects)), 'the base kustomization transforms the DaemonSet; apply -f and apply -k would differ');
		});
	}
}

function sortKeys(v) {
	if (Array.isArray(v)) return v.map(sortKeys);
	if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
	return v;
}

const examples = Object.fromEntries(Object.entries(objectsByFile).filter(([f]) => f.startsWith('examples/')));
const deviceClasses = new Set(
	Object.entries(objectsByFile)
		.filter(([f]) => f.startsWith('deploy/dra/'))
		.flatMap(([, objects]) => objects.filter((o) => o.kind === 'DeviceClass').map((o) => o.metadata.name)),
);
checkExamples(examples, deviceClasses);

// The DRA driver rolls as the device plugin does: the new pod beside the
// old one, on sockets named by its UID, so that claims are prepared on the
// node throughout a roll.
check('deploy/dra: the driver DaemonSet rolls with a surge, each pod on sockets named by its UID', () => {
	const ds = (objectsByFile['deploy/dra/ascend-dra-driver.yaml'] || []).find((o) => o.kind === 'DaemonSet');
	assert(ds, 'no DaemonSet in deploy/dra/ascend-dra-driver.yaml');
	const u = ds.spec.updateStrategy || {};
	const r = u.rollingUpdate || {};
	assert(u.type === 'RollingUpdate' && r.maxSurge === 1 && r.maxUnavailable === 0, `updateStrategy ${show(u)}`);
	const env = ds.spec.template.spec.containers[0].env || [];
	const inst = env.find((e) => e.name === 'ASCEND_PLUGIN_INSTANCE');
	assert(inst && inst.valueFrom && inst.valueFrom.fieldRef && inst.valueFrom.fieldRef.fieldPath === 'metadata.uid',
		`ASCEND_PLUGIN_INSTANCE ${show(inst)}: two pods of a node would serve the same sockets`);
	assert(env[env.length - 1] === inst, 'ASCEND_PLUGIN_INSTANCE is not last: overlays patch env by index');
});

process.exit(failures ? 1 : 0);
