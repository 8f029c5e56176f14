export const TERMINAL_VERSION = '0.1.0';
