{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{/*
The labels of every object: the ones deploy/ gives them, and Helm's own
(which release manages it), which tests/scripts/test_helm.sh sets aside
when it compares the chart with deploy/.
*/}}
{{- define "ascend-k8s.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/part-of: ascend-k8s
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
{{- end }}

{{- define "ascend-k8s.image" -}}
{{- $i := .Values.image -}}
{{- with $i.registry }}{{ trimSuffix "/" . }}/{{ end }}{{ $i.repository }}
{{- if $i.digest }}@{{ $i.digest }}{{ else }}:{{ $i.tag | default .Chart.AppVersion }}{{ end }}
{{- end }}

{{/* Whether a config file is mounted: given, or needed for the fault policy. */}}
{{- define "ascend-k8s.hasConfig" -}}
{{- if or .Values.config .Values.faultPolicy.files .Values.faultPolicy.existingConfigMap }}true{{ end }}
{{- end }}

{{/* The fault policy's ConfigMap, if any. */}}
{{- define "ascend-k8s.faultConfigMap" -}}
{{- if .Values.faultPolicy.existingConfigMap }}{{ .Values.faultPolicy.existingConfigMap }}
{{- else if .Values.faultPolicy.files }}ascend-fault-policy{{ end }}
{{- end }}

{{/* Whether the DRA driver runs, by either of its DaemonSets. */}}
{{- define "ascend-k8s.draRuns" -}}
{{- if or .Values.dra.enabled .Values.both.enabled }}true{{ end }}
{{- end }}

{{/*
The DaemonSets to render, as a JSON list of {name, values}, so that the
templates and the check below see the same set. Two DaemonSets must not both
run on a node: each serves every chip of its node. A selector whose every
label the other one asks for too picks a superset of its nodes, so that pair
is refused; selectors that merely may meet on a node labelled for both are
the operator's to keep apart.
*/}}
{{- define "ascend-k8s.daemonsets" -}}
{{- $out := list -}}
{{- if .Values.devicePlugin.enabled }}{{ $out = append $out (dict "name" "ascend-device-plugin" "values" .Values.devicePlugin) }}{{ end -}}
{{- if .Values.dra.enabled }}{{ $out = append $out (dict "name" "ascend-dra-driver" "values" .Values.dra) }}{{ end -}}
{{- if .Values.both.enabled }}{{ $out = append $out (dict "name" "ascend-npu-both" "values" .Values.both) }}{{ end -}}
{{- if not $out }}{{ fail "enable at least one front end: devicePlugin.enabled, dra.enabled or both.enabled" }}{{ end -}}
{{- range $a := $out }}{{ range $b := $out }}{{ if ne $a.name $b.name }}
{{- $covers := true }}
{{- range $k, $v := $a.values.nodeSelector }}{{ if ne (toString (index $b.values.nodeSelector $k | default "")) (toString $v) }}{{ $covers = false }}{{ end }}{{ end }}
{{- if $covers }}
{{- fail (printf "%s.nodeSelector picks every node of %s.nodeSelector: a node must run one of them only (each serves all its chips)" $a.name $b.name) }}
{{- end }}{{ end }}{{ end }}{{ end -}}
{{- toJson $out -}}
{{- end }}

{{/* The common end of every container's arguments: the health interval or the file, then extraArgs. */}}
{{- define "ascend-k8s.commonArgs" -}}
{{- if include "ascend-k8s.hasConfig" . }}
- --config=/etc/ascend-device-plugin/config.yaml
{{- else }}
- --health-interval={{ .Values.healthInterval }}
{{- end }}
{{- end }}

{{/* The environment both kinds of container start with. */}}
{{- define "ascend-k8s.driverEnv" -}}
- name: ASCEND_DRIVER_PATH
  value: {{ .Values.driverPath }}
- name: LD_LIBRARY_PATH
  value: $(ASCEND_DRIVER_PATH)/lib64/driver:$(ASCEND_DRIVER_PATH)/lib64/common:$(ASCEND_DRIVER_PATH)/lib64
{{- end }}

{{/* The mounts and volumes every container ends with: config, fault policy. */}}
{{- define "ascend-k8s.configMounts" -}}
{{- if include "ascend-k8s.hasConfig" . }}
- name: config
  mountPath: /etc/ascend-device-plugin
  readOnly: true
{{- end }}
{{- if include "ascend-k8s.faultConfigMap" . }}
- name: fault-policy
  mountPath: /etc/ascend-fault
  readOnly: true
{{- end }}
{{- end }}
{{- define "ascend-k8s.configVolumes" -}}
{{- if include "ascend-k8s.hasConfig" . }}
- name: config
  configMap:
    name: ascend-device-plugin-config
{{- end }}
{{- with include "ascend-k8s.faultConfigMap" . }}
- name: fault-policy
  configMap:
    name: {{ . }}
{{- end }}
{{- end }}

{{/* The pod spec's scheduling and image fields every DaemonSet shares. */}}
{{- define "ascend-k8s.podCommon" -}}
nodeSelector:
  {{- toYaml .ds.values.nodeSelector | nindent 2 }}
{{- with .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
