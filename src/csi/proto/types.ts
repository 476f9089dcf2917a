// Wire shapes of the csi.v1 messages the resizer uses, as codec.ts produces and accepts them:
// snake_case names, int64 as decimal strings, enums by name, and the set oneof member named in
// the oneof's own field. Hand-written for the small subset we use.

export type AccessModeName =
  | 'UNKNOWN'
  | 'SINGLE_NODE_WRITER'
  | 'SINGLE_NODE_READER_ONLY'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER'
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 'SINGLE_NODE_MULTI_WRITER';

export interface MountVolume {
  fs_type: string;
  mount_flags: string[];
  volume_mount_group?: string;
}

export type VolumeCapability =
  | { block: Record<string, never>; mount?: undefined; access_mode: { mode: AccessModeName } }
  | { mount: MountVolume; block?: undefined; access_mode: { mode: AccessModeName } };

export interface ProbeResponse {
  ready: { value: boolean } | null;
}

export interface GetPluginInfoResponse {
  name: string;
  vendor_version: string;
  manifest: Record<string, string>;
}

export interface PluginCapability {
  type?: 'service' | 'volume_expansion';
  service?: { type: string } | null;
  volume_expansion?: { type: string } | null;
}

export interface GetPluginCapabilitiesResponse {
  capabilities: PluginCapability[];
}

export interface RpcCapability {
  type?: 'rpc';
  rpc?: { type: string } | null;
}

export interface ControllerGetCapabilitiesResponse {
  capabilities: RpcCapability[];
}

export interface NodeGetCapabilitiesResponse {
  capabilities: RpcCapability[];
}

export interface ControllerExpandVolumeRequest {
  volume_id: string;
  capacity_range: { required_bytes: string; limit_bytes?: string };
  secrets: Record<string, string>;
  volume_capability?: VolumeCapability | null;
}

export interface ControllerExpandVolumeResponse {
  capacity_bytes: string;
  node_expansion_required: boolean;
}

export interface ControllerModifyVolumeRequest {
  volume_id: string;
  secrets: Record<string, string>;
  mutable_parameters: Record<string, string>;
}
