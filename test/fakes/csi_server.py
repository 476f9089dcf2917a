"""A CSI driver on gRPC C-core (Debian's python3-grpcio) for the interop tests.

Messages come from the official csi.proto, compiled by buf into a FileDescriptorSet that the test
passes in; no generated code. Replies are scripted per method through stdin, one JSON object a
line ({"method": ..., "reply": {...}}), each acknowledged with "ok" on stdout; without a script
the server answers like a small driver. "ready" on stdout means it serves.

  python3 csi_server.py SOCKET DESCRIPTOR_SET DRIVER_NAME
"""
import base64
import json
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

socket_path, descriptor_set, driver_name = sys.argv[1:4]

pool = descriptor_pool.DescriptorPool()
files = descriptor_pb2.FileDescriptorSet.FromString(open(descriptor_set, "rb").read())
for f in files.file:
    pool.Add(f)


def message(name):
    desc = pool.FindMessageTypeByName("csi.v1." + name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


scripts = {}
lock = threading.Lock()
volumes = {"vol-1": 1 << 30}


def next_reply(method):
    with lock:
        queue = scripts.get(method, [])
        return queue.pop(0) if queue else None


def handler(method, request_type, response_type, answer):
    request_class, response_class = message(request_type), message(response_type)

    def behave(request, context):
        reply = next_reply(method) or {}
        if reply.get("delayMs"):
            time.sleep(reply["delayMs"] / 1000)
        if "code" in reply:
            if reply.get("detailsBin"):
                context.set_trailing_metadata((("grpc-status-details-bin", base64.b64decode(reply["detailsBin"])),))
            context.abort(grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == reply["code"])), reply.get("details", ""))
        response = response_class()
        answer(request, response, reply, context)
        return response

    return grpc.unary_unary_rpc_method_handler(
        behave, request_deserializer=request_class.FromString, response_serializer=response_class.SerializeToString)


def plugin_info(request, response, reply, context):
    response.name = driver_name
    response.vendor_version = "x" * reply.get("vendorVersionBytes", 5)


def plugin_capabilities(request, response, reply, context):
    response.capabilities.add().service.type = 1  # CONTROLLER_SERVICE
    response.capabilities.add().volume_expansion.type = 1  # ONLINE


def probe(request, response, reply, context):
    response.ready.value = True


def controller_capabilities(request, response, reply, context):
    for rpc_type in (9, 14):  # EXPAND_VOLUME, MODIFY_VOLUME
        response.capabilities.add().rpc.type = rpc_type


def expand(request, response, reply, context):
    if request.volume_id not in volumes:
        context.abort(grpc.StatusCode.NOT_FOUND, "volume %s not found" % request.volume_id)
    volumes[request.volume_id] = max(volumes[request.volume_id], request.capacity_range.required_bytes)
    response.capacity_bytes = volumes[request.volume_id]


def modify(request, response, reply, context):
    if request.volume_id not in volumes:
        context.abort(grpc.StatusCode.NOT_FOUND, "volume %s not found" % request.volume_id)


def node_capabilities(request, response, reply, context):
    response.capabilities.add().rpc.type = 3  # EXPAND_VOLUME


server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
server.add_generic_rpc_handlers((
    grpc.method_handlers_generic_handler("csi.v1.Identity", {
        "GetPluginInfo": handler("GetPluginInfo", "GetPluginInfoRequest", "GetPluginInfoResponse", plugin_info),
        "GetPluginCapabilities": handler("GetPluginCapabilities", "GetPluginCapabilitiesRequest", "GetPluginCapabilitiesResponse", plugin_capabilities),
        "Probe": handler("Probe", "ProbeRequest", "ProbeResponse", probe),
    }),
    grpc.method_handlers_generic_handler("csi.v1.Controller", {
        "ControllerGetCapabilities": handler("ControllerGetCapabilities", "ControllerGetCapabilitiesRequest", "ControllerGetCapabilitiesResponse", controller_capabilities),
        "ControllerExpandVolume": handler("ControllerExpandVolume", "ControllerExpandVolumeRequest", "ControllerExpandVolumeResponse", expand),
        "ControllerModifyVolume": handler("ControllerModifyVolume", "ControllerModifyVolumeRequest", "ControllerModifyVolumeResponse", modify),
    }),
    grpc.method_handlers_generic_handler("csi.v1.Node", {
        "NodeGetCapabilities": handler("NodeGetCapabilities", "NodeGetCapabilitiesRequest", "NodeGetCapabilitiesResponse", node_capabilities),
    }),
))
server.add_insecure_port("unix:" + socket_path)
server.start()
print("ready", flush=True)

for line in sys.stdin:
    command = json.loads(line)
    with lock:
        scripts.setdefault(command["method"], []).append(command["reply"])
    print("ok", flush=True)
server.stop(0)
