/** The version every Orrery process reports (presence, `--version`, metrics). */
export const ORRERY_VERSION = '0.1.0';
