// An EventRecorder that keeps what it was told, for asserting on events in controller tests.
import type { EventRecorder, EventType } from '../../src/kube/api/events.js';
import type { KubeObject } from '../../src/model/objects.js';

export interface RecordedEvent {
  /** "ns/name" of the involved object. */
  object: string;
  kind: string | undefined;
  type: EventType;
  reason: string;
  message: string;
}

export class RecordingEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const ns = obj.metadata?.namespace;
    const name = obj.metadata?.name ?? '';
    this.events.push({ object: ns ? `${ns}/${name}` : name, kind: obj.kind, type, reason, message });
  }

  /** Events with this reason, in order. */
  withReason(reason: string): RecordedEvent[] {
    return this.events.filter((e) => e.reason === reason);
  }

  clear(): void {
    this.events.length = 0;
  }
}
