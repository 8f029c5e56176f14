/**
 * The serialport binding types, through @serialport/bindings-cpp (whose declarations resolve
 * @serialport/bindings-interface, which declares its types for `require` only).
 */
export type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  SetOptions,
} from '@serialport/bindings-cpp';
