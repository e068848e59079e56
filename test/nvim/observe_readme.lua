-- Runs after the README's Neovim snippet (loaded as init.lua with `nvim -u`): records every
-- diagnostic publication and every vim.notify call, opens the one file named by $TOOLPIN_FILE as
-- a user would (`:edit`, which fires the snippet's autocommand), observes for $TOOLPIN_WINDOW_MS
-- milliseconds, and writes what it saw as JSON to $TOOLPIN_NVIM_OUT.
--
-- The window is watched in full because the contract under test is "never, within the window"
-- (no unknown-server diagnostic in any publication), which no earlier moment can establish; it
-- ends early once an unknown-server diagnostic has been seen, because the test has failed, or when
-- $TOOLPIN_STOP_TEXT is set and the opened file's latest publication holds $TOOLPIN_STOP_COUNT
-- diagnostics whose message contains that text (the outcome the test waits for has arrived).
-- When $TOOLPIN_HOVER_CODE is set, the hover at the first diagnostic of that code in the opened
-- file's latest publication is asked for after the window, as `K` would, and recorded.
local out_path = os.getenv('TOOLPIN_NVIM_OUT')
local file = os.getenv('TOOLPIN_FILE')
local window_ms = tonumber(os.getenv('TOOLPIN_WINDOW_MS') or '0')
local then_open = os.getenv('TOOLPIN_THEN_OPEN')
local stop_text = os.getenv('TOOLPIN_STOP_TEXT') or ''
local stop_count = tonumber(os.getenv('TOOLPIN_STOP_COUNT') or '0') or 0
local hover_code = os.getenv('TOOLPIN_HOVER_CODE') or ''
local stop_reached = false
local latest_of_file = {}
local result = { publications = {}, notifications = {}, unknown_server_seen = false }
local started = vim.loop.hrtime()

local function elapsed_ms()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

local function unknown_server(diagnostic)
  local message = diagnostic.message or ''
  return diagnostic.code == 'TP406'
    or message:find('no server named', 1, true) ~= nil
    or message:find('no MCP server is configured', 1, true) ~= nil
end

-- The snippet's client uses the default handlers, which Neovim looks up at each notification.
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
  if params and params.uri then
    local entry = { at_ms = elapsed_ms(), file = vim.uri_to_fname(params.uri), diagnostics = {} }
    local matching = 0
    for _, diagnostic in ipairs(params.diagnostics or {}) do
      table.insert(entry.diagnostics, { code = diagnostic.code, message = diagnostic.message, line = diagnostic.range.start.line, character = diagnostic.range.start.character })
      if unknown_server(diagnostic) then result.unknown_server_seen = true end
      if stop_text ~= '' and (diagnostic.message or ''):find(stop_text, 1, true) then matching = matching + 1 end
    end
    -- Only the opened file's latest publication counts: a later one replaces an earlier one.
    if entry.file == file then
      stop_reached = stop_text ~= '' and matching >= stop_count
      latest_of_file = params.diagnostics or {}
    end
    table.insert(result.publications, entry)
  end
  return publish(err, params, ctx, config)
end

local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(result.notifications, { message = tostring(message), level = level })
  return notify(message, level, opts)
end

local function finish()
  result.clients = #vim.lsp.get_active_clients()
  -- Errors raised in autocommand callbacks end up in the message history, not in a pcall.
  result.messages = vim.api.nvim_exec('messages', true)
  local handle = io.open(out_path, 'w')
  handle:write(vim.fn.json_encode(result))
  handle:close()
  for _, client in ipairs(vim.lsp.get_active_clients()) do client.stop() end
  vim.wait(5000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
  vim.cmd('qall!')
end

local opened, open_error = pcall(vim.cmd, 'edit ' .. vim.fn.fnameescape(file))
if not opened then result.open_error = tostring(open_error) end
local first = vim.api.nvim_get_current_buf()

vim.wait(window_ms, function() return result.unknown_server_seen or stop_reached end, 50)
result.window_ended_ms = elapsed_ms()
-- Clients count here only once initialized, so this is read at the end of the window.
result.attached_first = #vim.lsp.buf_get_clients(first)

if hover_code ~= '' then
  for _, diagnostic in ipairs(latest_of_file) do
    if diagnostic.code == hover_code then
      local answers = vim.lsp.buf_request_sync(first, 'textDocument/hover', { textDocument = { uri = vim.uri_from_bufnr(first) }, position = diagnostic.range.start }, 10000)
      for _, answer in pairs(answers or {}) do
        if answer.result then result.hover = answer.result end
      end
      break
    end
  end
end

-- After the window: a second file of the same project must reuse the running client.
if then_open and then_open ~= '' then
  vim.cmd('edit ' .. vim.fn.fnameescape(then_open))
  local buffer = vim.api.nvim_get_current_buf()
  vim.wait(5000, function() return #vim.lsp.buf_get_clients(buffer) > 0 end, 50)
  result.attached_second = #vim.lsp.buf_get_clients(buffer)
end
finish()
