#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Whether two renders of one kustomization hold the same objects, for
// tests/scripts/test_manifests.sh (renders of different kubectl versions),
// or a render of the Helm chart and one of deploy/, for
// tests/scripts/test_helm.sh.
//
//   node same-objects.cjs [--helm] A.yaml B.yaml
//
// --helm sets aside what only says which Helm release manages an object:
// the labels helm.sh/chart, app.kubernetes.io/managed-by,
// app.kubernetes.io/instance and app.kubernetes.io/version of each object's
// metadata (deploy/ has no release to name), and compares the configuration
// file of a ConfigMap (data["config.yaml"]) as the YAML it holds, since the
// chart writes it from values without deploy/'s comments.
//
// Both files are parsed as YAML 1.1, like the API server reads them; objects
// are matched by apiVersion, kind, namespace and name, so the order of the
// documents and of the keys does not matter, that of lists does. Exits 0 when
// they are the same, else prints each difference and exits 1.
'use strict';

const fs = require('fs');
const YAML = require('yaml');

const args = process.argv.slice(2);
const helm = args[0] === '--helm';
const [a, b] = helm ? args.slice(1) : args;
if (!a || !b) {
	console.error('usage: node same-objects.cjs [--helm] A.yaml B.yaml');
	process.exit(2);
}

const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];
function setAsideHelm(o) {
	const labels = (o.metadata || {}).labels;
	if (labels) {
		for (const l of HELM_LABELS) delete labels[l];
		if (!Object.keys(labels).length) delete o.metadata.labels;
	}
	if (o.kind === 'ConfigMap' && o.data && typeof o.data['config.yaml'] === 'string')
		o.data['config.yaml'] = YAML.parse(o.data['config.yaml'], { version: '1.1' });
	return o;
}

function objects(file) {
	const out = new Map();
	for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { version: '1.1', uniqueKeys: true })) {
		const problems = [...doc.errors, ...doc.warnings];
		if (problems.length) throw new Error(`${file}: ${problems.map((p) => p.message).join('; ')}`);
		const o = doc.toJS();
		if (o === null || o === undefined) continue;
		if (helm) setAsideHelm(o);
		const m = o.metadata || {};
		const id = `${o.apiVersion} ${o.kind} ${m.namespace || ''}/${m.name}`;
		if (out.has(id)) throw new Error(`${file}: ${id} twice`);
		out.set(id, o);
	}
	return out;
}

// The JSON paths where x and y differ (at most a few).
function differences(x, y, where, out) {
	if (out.length >= 5) return out;
	if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
		const keys = Array.isArray(x) ? [...Array(Math.max(x.length, y.length)).keys()] : [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
		for (const k of keys) differences(x[k], y[k], `${where}/${k}`, out);
	} else if (JSON.stringify(x) !== JSON.stringify(y)) {
		out.push(`${where || '/'}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
	}
	return out;
}

const [oa, ob] = [objects(a), objects(b)];
const problems = [];
for (const id of oa.keys()) if (!ob.has(id)) problems.push(`${id} only in ${a}`);
for (const id of ob.keys()) if (!oa.has(id)) problems.push(`${id} only in ${b}`);
for (const [id, o] of oa) if (ob.has(id)) for (const d of differences(o, ob.get(id), '', [])) problems.push(`${id} ${d}`);
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
