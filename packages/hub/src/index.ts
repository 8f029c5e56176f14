/**
 * @tensormine/hub: the game hub — the game directory with live online checks, the ads list,
 * sitemap.xml, robots.txt and the static front end; in process (`createHub()`) or as a
 * service (`tensormine-hub start`).
 */
export { type CreateHubOptions, createHub, HUB_VERSION, type Hub } from './app.js';
export {
  BUILTIN_STATIC_DIR,
  HUB_SETTING_NAMES,
  HUB_SETTINGS,
  type HubConfig,
  type HubSettingName,
  resolveHubConfig,
} from './config.js';
export { type Directory, loadDirectory } from './directory.js';
export { buildRobots, buildSitemap } from './site.js';
export { StatusProber, type StatusProberOptions } from './status.js';
