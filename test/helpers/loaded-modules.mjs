/**
 * `node --import <this file>`: records every module the process loads (its URL, one a line) in the file named
 * by LOADED_MODULES_FILE, through Node's module customization hooks (module.register). A test reads it to see
 * what a gateway has loaded, as a person could with the same flag; it changes nothing that is loaded.
 */
import { register } from 'node:module';

const file = process.env['LOADED_MODULES_FILE'];
if (file) register('./loaded-modules-hooks.mjs', { parentURL: import.meta.url, data: { file } });
