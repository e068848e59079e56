-- Headless Neovim as an independent LSP client: starts `toolpin lsp --stdio`, opens a broken
-- blueprint, waits for the server's diagnostics and writes them as JSON to the file named by
-- $TOOLPIN_NVIM_OUT. Neovim 0.7 has no vim.lsp.start, so start_client + buf_attach_client is used.
local out_path = os.getenv('TOOLPIN_NVIM_OUT')
local cli = os.getenv('TOOLPIN_CLI')
local file = os.getenv('TOOLPIN_FILE')
local result = { ok = false }

local function finish()
  local handle = io.open(out_path, 'w')
  handle:write(vim.fn.json_encode(result))
  handle:close()
  vim.cmd('qall!')
end

local client_id = vim.lsp.start_client({
  name = 'toolpin',
  cmd = { 'node', cli, 'lsp', '--stdio' },
  root_dir = vim.fn.fnamemodify(file, ':h'),
  on_exit = function(code) result.exit_code = code end,
})
if not client_id then
  result.error = 'start_client failed'
  finish()
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buffer = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buffer, client_id)

local arrived = vim.wait(10000, function() return #vim.diagnostic.get(buffer) > 0 end, 50)
result.ok = arrived
result.diagnostics = {}
for _, diagnostic in ipairs(vim.diagnostic.get(buffer)) do
  table.insert(result.diagnostics, {
    code = diagnostic.code or (diagnostic.user_data and diagnostic.user_data.lsp and diagnostic.user_data.lsp.code),
    source = diagnostic.source,
    severity = diagnostic.severity,
    lnum = diagnostic.lnum,
    col = diagnostic.col,
    end_lnum = diagnostic.end_lnum,
    end_col = diagnostic.end_col,
    message = diagnostic.message,
  })
end
local client = vim.lsp.get_client_by_id(client_id)
result.server_name = client and client.server_info and client.server_info.name or nil
vim.lsp.stop_client(client_id)
finish()
