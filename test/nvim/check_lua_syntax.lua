-- Compiles, without running, each Lua file named in $TOOLPIN_LUA_FILES (separated by newlines)
-- with the LuaJIT inside Neovim (loadstring), and writes {file: error or true} as JSON to
-- $TOOLPIN_NVIM_OUT. Nothing is executed, so a block written for a newer Neovim can be checked
-- for syntax in an older one.
local out_path = os.getenv('TOOLPIN_NVIM_OUT')
local result = {}
for path in (os.getenv('TOOLPIN_LUA_FILES') or ''):gmatch('[^\n]+') do
  local handle = io.open(path, 'r')
  local source = handle:read('*a')
  handle:close()
  local chunk, problem = loadstring(source, '=' .. path)
  result[path] = chunk ~= nil and true or problem
end
local handle = io.open(out_path, 'w')
handle:write(vim.fn.json_encode(result))
handle:close()
vim.cmd('qall!')
