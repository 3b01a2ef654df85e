/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the events the daemon's log says, in one list: with
 * --log-format json a line that says one carries "event":"<name>" beside
 * its message (base/log.h's log_event), so that alerting rules and the
 * integration tests match a name and fields that stay when a sentence is
 * reworded. The names are an interface: docs/metrics.md lists each with its
 * fields (tests/scripts/test_docs.sh checks that every name is there, in
 * English and in Chinese); rename one only as a breaking change. Header-only:
 * the enum and the names come from the one X-macro below. */
#pragma once

/* X(ID, name): LOG_EVENT_ID says the string name. */
#define LOG_EVENTS(X)                                                   \
	X(DCMI_LOADED, "dcmi.loaded")                                   \
	X(DCMI_UNAVAILABLE, "dcmi.unavailable")                         \
	X(DEVFS_USED, "devfs.used")                                     \
	X(DCMI_EVENTS_SUBSCRIBED, "dcmi.events-subscribed")             \
	X(DCMI_EVENTS_UNAVAILABLE, "dcmi.events-unavailable")           \
	X(DCMI_EVENT, "dcmi.event")                                     \
	X(DRIVER_READY, "driver.ready")                                 \
	X(DRIVER_NOT_READY, "driver.not-ready")                         \
	X(CHIPS_FOUND, "chips.found")                                   \
	X(CHIPS_NONE, "chips.none")                                     \
	X(CHIPS_NUMA, "chips.numa")                                     \
	X(DEVICE_UNHEALTHY, "device.unhealthy")                         \
	X(DEVICE_HEALTHY, "device.healthy")                             \
	X(FAULT_LEVEL, "fault.level")                                   \
	X(FAULT_ESCALATED, "fault.escalated")                           \
	X(FAULT_SEPARATED, "fault.separated")                           \
	X(FAULT_ESCALATION_ENDED, "fault.escalation-ended")             \
	X(FAULT_RELEASED, "fault.released")                             \
	X(FAULT_POLICY_CHANGED, "fault.policy-changed")                 \
	X(FAULT_NETWORK, "fault.network")                               \
	X(RESET_POLICY_CHANGED, "reset.policy-changed")                 \
	X(RESET_STARTED, "reset.started")                               \
	X(RESET_RETURNED, "reset.returned")                             \
	X(RESET_DONE, "reset.done")                                     \
	X(RESET_FAILED, "reset.failed")                                 \
	X(RESET_BACK_FAULTY, "reset.back-faulty")                       \
	X(RESET_TIMED_OUT, "reset.timed-out")                           \
	X(RESET_HELD, "reset.held")                                     \
	X(RESET_HOLDERS_UNKNOWN, "reset.holders-unknown")               \
	X(RESET_BUSY, "reset.busy-process")                             \
	X(RESET_GROUP_UNKNOWN, "reset.group-unknown")                   \
	X(RESET_EXHAUSTED, "reset.exhausted")                           \
	X(SEPARATIONS_LOADED, "separations.loaded")                     \
	X(SEPARATIONS_UNREADABLE, "separations.unreadable")             \
	X(SEPARATIONS_UNWRITABLE, "separations.unwritable")             \
	X(SEPARATION_ADDED, "separation.added")                         \
	X(SEPARATION_REMOVED, "separation.removed")                     \
	X(PLUGIN_SERVING, "plugin.serving")                             \
	X(PLUGIN_SERVE_FAILED, "plugin.serve-failed")                   \
	X(PLUGIN_REGISTERING, "plugin.registering")                     \
	X(PLUGIN_REGISTERED, "plugin.registered")                       \
	X(PLUGIN_REREGISTERED, "plugin.reregistered")                   \
	X(PLUGIN_REGISTER_FAILED, "plugin.register-failed")             \
	X(PLUGIN_REGISTER_RETRY, "plugin.register-retry")               \
	X(PLUGIN_KUBELET_NOT_READY, "plugin.kubelet-not-ready")         \
	X(PLUGIN_NO_STREAM, "plugin.no-stream")                         \
	X(PLUGIN_STREAM_ENDED, "plugin.stream-ended")                   \
	X(PLUGIN_SOCKET_REMOVED, "plugin.socket-removed")               \
	X(PLUGIN_SESSION, "plugin.session")                             \
	X(KUBELET_DIR_REMOVED, "kubelet.dir-removed")                   \
	X(KUBELET_DIR_BACK, "kubelet.dir-back")                         \
	X(CONFIG_CHANGED, "config.changed")                             \
	X(CONFIG_SIGHUP, "config.sighup")                               \
	X(CONFIG_APPLIED, "config.applied")                             \
	X(CONFIG_REJECTED, "config.rejected")                           \
	X(CONFIG_INOTIFY_OVERFLOW, "config.inotify-overflow")           \
	X(RESOURCE_CHANGED, "resource.changed")                         \
	X(RESOURCE_GONE, "resource.gone")                               \
	X(TIME_SLICING, "time-slicing")                                 \
	X(DEVICE_SHARE_OFF, "device-share.off")                         \
	X(DEVICE_SHARE_ON, "device-share.on")                           \
	X(DEVICE_SHARE_ENABLED, "device-share.enabled")                 \
	X(DEVICE_SHARE_ENABLE_FAILED, "device-share.enable-failed")     \
	X(DEVICE_SHARE_UNKNOWN, "device-share.unknown")                 \
	X(VNPU_TEMPLATE_FOUND, "vnpu.template-found")                   \
	X(VNPU_RESOURCE_REFUSED, "vnpu.resource-refused")               \
	X(VNPU_UNADVERTISED, "vnpu.unadvertised")                       \
	X(CDI_WRITTEN, "cdi.written")                                   \
	X(CDI_REMOVED, "cdi.removed")                                   \
	X(HOST_FILES_CHANGED, "host-files.changed")                     \
	X(NFD_WRITTEN, "nfd.written")                                   \
	X(NFD_REWRITTEN, "nfd.rewritten")                               \
	X(METRICS_SERVING, "metrics.serving")                           \
	X(TELEMETRY_READ, "telemetry.read")                             \
	X(POD_RESOURCES_READ, "pod-resources.read")                     \
	X(POD_RESOURCES_UNAVAILABLE, "pod-resources.unavailable")       \
	X(INSTANCE_STANDBY, "instance.standby")                         \
	X(START_FAILED, "start.failed")                                 \
	X(FRONT_ENDS, "front-ends")                                     \
	X(DRA_SERVING, "dra.serving")                                   \
	X(DRA_REGISTERED, "dra.registered")                             \
	X(DRA_SOCKETS_RESTORED, "dra.sockets-restored")                 \
	X(DRA_CHECKPOINT_RESTORED, "dra.checkpoint-restored")           \
	X(DRA_CHECKPOINT_KEPT, "dra.checkpoint-kept")                   \
	X(VNPU_CALL, "dra.vnpu-call")                                   \
	X(VNPU_CREATED, "dra.vnpu-created")                             \
	X(VNPU_DESTROYED, "dra.vnpu-destroyed")                         \
	X(VNPU_FAILED, "dra.vnpu-failed")                               \
	X(SLICES_PUBLISHED, "slices.published")                         \
	X(SLICES_PUBLISH_FAILED, "slices.publish-failed")               \
	X(SLICES_WATCH_FAILED, "slices.watch-failed")                   \
	X(SLICES_FIELDS_DROPPED, "slices.fields-dropped")               \
	X(LOG_DROPPED, "log.dropped")

enum log_event {
	LOG_EVENT_NONE, /* a line that says no event: no "event" key */
#define LOG_EVENT_ENUM(id, name) LOG_EVENT_##id,
	LOG_EVENTS(LOG_EVENT_ENUM)
#undef LOG_EVENT_ENUM
};
