"""Tests of ``hermes_core/errors.py``: a refusal whose words say the key's balance or quota is
spent (a dead key) against one that asks only for a wait, in each provider's words."""

from __future__ import annotations

import pytest

from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    QuotaExhausted,
    RateLimited,
    error_from_status,
)
from tests.conftest import NOW


@pytest.mark.parametrize("body", [
    # LiteLLM re-raising OpenAI's quota error: its own code ("429"), OpenAI's whole error in words
    {"error": {"message": "litellm.RateLimitError: OpenAIException - Error code: 429 - "
                          "{'error': {'message': 'You exceeded your current quota, please check "
                          "your plan and billing details.', 'type': 'insufficient_quota', "
                          "'param': None, 'code': 'insufficient_quota'}}",
               "type": None, "param": None, "code": "429"}},
    # a gateway answering every refusal with a 429: Anthropic's empty prepaid balance
    {"error": {"type": "rate_limit_error",
               "message": "Your credit balance is too low to access the Anthropic API."}},
    "upstream said: billing_hard_limit_reached",
])
def test_a_429_whose_words_say_the_quota_is_spent_is_a_dead_key_not_a_wait(body):
    """A cool-down and back in a minute, a key with no money left was tried again every minute
    by every process; as a rejection it is quarantined and rechecked rarely."""
    assert type(error_from_status(429, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Zhipu (bigmodel.cn / z.ai) answers an unpaid account with a 429, business code 1113, in
    # Chinese or English as the account's site speaks; proxies pass the message on alone
    {"error": {"code": "1113", "message": "余额不足或无可用资源包,请充值。"}},
    "余额不足或无可用资源包,请充值。",
    {"error": {"code": "1113", "message": "Insufficient balance or no resource package. "
                                          "Please recharge."}},
    {"error": {"code": "1113", "message": "您的账户已欠费，请充值后重试"}},
    {"error": {"code": "1113", "message": "Your account is in arrears, please recharge and try "
                                          "again"}},
    # Moonshot (Kimi): a 429 typed exceeded_current_quota_error for an empty balance
    {"error": {"message": "Your account org-x <ak-y> is suspended due to insufficient balance, "
                          "please recharge your account or check your plan and billing details",
               "type": "exceeded_current_quota_error"}},
    # Baidu Qianfan (AppBuilder): BILLING_INSUFFICIENT_BALANCE
    {"error": {"code": "BILLING_INSUFFICIENT_BALANCE",
               "message": "Your account has insufficient balance"}},
    # SiliconFlow's wording (a 403 there; a gateway may send it as a 429)
    {"code": 30011, "message": "The selected model requires paid balance. Your paid balance is "
                               "insufficient. Please top up and try again.", "data": None},
])
def test_a_429_saying_the_balance_is_empty_in_any_provider_s_words_is_a_dead_key(body):
    """Zhipu's 余额不足 and Moonshot's suspended balance were read as a wait: every process
    tried the unpaid key again after each default minute, all day."""
    assert type(error_from_status(429, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Gemini says "current quota" of its per-minute limit too: a wait, not a dead key
    {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
               "message": "You exceeded your current quota, please check your plan and billing "
                          "details. Quota exceeded for metric: generate_content_free_tier_requests"
                          ", limit: 15"}},
    {"error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded "
                                                      "your per-minute rate limit"}},
    # each provider's per-minute 429 as it is sent, none a spent balance
    {"error": {"message": "Rate limit reached for gpt-4o in organization org-x on tokens per min "
                          "(TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. "
                          "Visit https://platform.openai.com/account/rate-limits to learn more.",
               "type": "tokens", "param": None, "code": "rate_limit_exceeded"}},
    {"type": "error", "error": {"type": "rate_limit_error", "message": "This request would exceed "
     "the rate limit for your organization (x) of 50,000 input tokens per minute. For details, "
     "refer to: https://docs.claude.com/en/api/rate-limits."}},
    {"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation under "
               "Azure OpenAI API version 2024-05-01-preview have exceeded token rate limit of your "
               "current OpenAI S0 pricing tier. Please retry after 2 seconds. Please go here: "
               "https://aka.ms/oai/quotaincrease if you would like to further increase the "
               "default rate limit."}},
    {"error": {"message": "litellm.RateLimitError: AzureException RateLimitError - Error code: 429 "
               "- {'error': {'code': '429', 'message': 'Requests to the ChatCompletions_Create "
               "Operation have exceeded token rate limit of your current AIServices S0 pricing "
               "tier.'}}", "type": "throttling_error", "param": None, "code": "429"}},
    {"error": {"message": "Rate limit exceeded: free-models-per-min. ", "code": 429,
               "metadata": {"headers": {"X-RateLimit-Remaining": "0"}}}},
    {"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}},
    {"error": {"message": "Requests rate limit exceeded, please try again later.",
               "type": "limit_requests", "param": None, "code": "limit_requests"}},
    {"code": "Throttling.AllocationQuota", "message": "Allocated quota exceeded, please increase "
                                                      "your quota limit."},
    # Zhipu's concurrency (1302), frequency (1303), traffic (1305) limits and a usage cap that
    # names its reset (1308): waits, however much they speak of 限额
    {"error": {"code": "1302", "message": "您当前使用该 API 的并发数过高，请降低并发，或联系客服"
                                          "增加限额"}},
    {"error": {"code": "1302", "message": "您的账户已达到速率限制，请您控制请求频率"}},
    {"error": {"code": "1303", "message": "您当前使用该 API 的频率过高，请降低频率，或联系客服增加"
                                          "限额"}},
    {"error": {"code": "1305", "message": "该模型当前访问量过大，请您稍后再试"}},
    {"error": {"code": "1308", "message": "已达到 5 小时 的使用上限。您的限额将在 2026-12-07 "
                                          "09:00:00 重置"}},
    {"error": {"code": "1302", "message": "High concurrency usage of this API, please reduce "
                                          "concurrency or contact customer service to increase "
                                          "limits"}},
    # Moonshot's and Qianfan's rate limits
    {"error": {"message": "Your account org-x <ak-y> request reached max request: 3, please try "
                          "again after 1 seconds", "type": "rate_limit_reached_error"}},
    {"error": {"code": "RATE_LIMIT_TOTAL_QPS", "message": "Total API QPS limit exceeded"}},
])
def test_a_429_about_a_rate_not_a_balance_stays_a_wait(body):
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


@pytest.mark.parametrize("body", [
    # Qwen (DashScope / Model Studio, OpenAI-compatible mode): its per-minute token limit
    # (Throttling.AllocationQuota) in OpenAI's quota words and code, pointing at its doc's
    # token-limit section; the throttle clears within the minute
    {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                          "details. For details, see: https://help.aliyun.com/zh/model-studio/"
                          "error-code#token-limit", "type": "insufficient_quota", "param": None,
               "code": "insufficient_quota"}},
    {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                          "details. For details, see: https://www.alibabacloud.com/help/en/"
                          "model-studio/error-code#token-limit", "type": "insufficient_quota"}},
    # the same re-raised by LiteLLM: the code only in the words
    {"error": {"message": "litellm.RateLimitError: OpenAIException - Error code: 429 - {'error': "
                          "{'message': 'You exceeded your current quota, please check your plan "
                          "and billing details. For details, see: https://help.aliyun.com/zh/"
                          "model-studio/error-code#token-limit', 'type': 'insufficient_quota'}}",
               "type": "throttling_error", "code": "429"}},
])
def test_qwen_s_per_minute_limit_in_quota_words_is_a_wait_not_a_dead_key(body):
    """Read as a spent quota, a live Qwen key was quarantined (rechecked a minute later, then
    twice as long after each throttled recheck) for a limit that frees within the minute."""
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


# Volcengine Ark (火山方舟) answers an account in arrears with 403 code AccountOverdueError (its
# public error codes; coze-studio #2195), DashScope (Qwen / Model Studio) with 400 code Arrearage,
# "Access denied, please make sure your account is in good standing." (supersonic #1572; in its
# OpenAI-compatible mode, TradingAgents-CN #170): each as sent, and as a gateway answering every
# refusal with 429 sends it
_OVERDUE = [
    {"code": "AccountOverdueError", "message": "The request failed because your account has an "
     "overdue balance. Request id: 0217580791812", "param": "", "type": "Forbidden"},
    {"error": {"code": "AccountOverdueError", "message": "The request failed because your account "
               "has an overdue balance. Request ID: 0217", "param": "", "type": "Forbidden"}},
    {"statusCode": 400, "message": "Access denied, please make sure your account is in good "
     "standing.", "code": "Arrearage", "isJson": True, "requestId": "8af536f9"},
    {"error": {"code": "Arrearage", "param": None, "message": "Access denied, please make sure "
               "your account is in good standing.", "type": "Arrearage"}},
    # LiteLLM's re-raise: the code only in the words
    {"error": {"message": "litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': "
               "{'code': 'Arrearage', 'param': None, 'message': 'Access denied, please make sure "
               "your account is in good standing.', 'type': 'Arrearage'}}", "code": "400"}},
]


@pytest.mark.parametrize("status", [400, 403, 429])
@pytest.mark.parametrize("body", _OVERDUE)
def test_an_account_in_arrears_in_volcengine_s_or_dashscope_s_words_is_a_dead_key(status, body):
    """Read as a 403 the Ark key was rejected for good ("replace the key") when the account
    needed paying; DashScope's 400 was a bad request, failing every call while the pool kept
    handing out the unpaid key; behind a gateway's 429 both were a wait, retried each minute."""
    assert type(error_from_status(status, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Moonshot's daily token cap (TPD; cc-switch #240, kimi-cli #2318): a limit that resets, not
    # an empty balance
    {"error": {"message": "Your account org-x / proj-y <ak-z> request reached organization TPD "
                          "rate limit, current: 1508351, limit: 1500000",
               "type": "rate_limit_reached_error"}},
])
def test_a_daily_token_cap_stays_a_wait(body):
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


# Ordinary 400s as providers sent them (issue threads found by search: zhipuai-sdk #14,
# FastGPT #2673, crush #1237, chatgpt-plugin #696, agno #5317, MindSearch #307, PillOCR #21,
# ai.nvim #13, gemini-cli #4701, openai-openapi #11, kibitz #87, LibreChat #3111, OpenHands
# #4643, vllm #3906, copilot-api #176, qwen-code #656 and #2384, Langchain-Chatchat #2815)
_ORDINARY_400 = [
    {"error": {"code": "1210", "message": "API 调用参数有误，请检查文档。"}},
    {"error": {"code": "1214", "message": "messages 参数非法。请检查文档。"}},
    {"code": "1210", "message": "Invalid API parameter, please check the documentation."},
    {"code": "InvalidParameter", "message": "Role must be user or assistant and Content length "
     "must be greater than 0", "request_id": "a1a17b2c-ab3a-9b6f-8994-858509d1361b"},
    {"code": "InvalidParameter", "message": "Tool names are not allowed to be [search]"},
    {"error": {"code": "invalid_parameter_error", "param": None, "message": "<400> InternalError."
               "Algo.InvalidParameter: 'messages' must contain the word 'json' in some form, to "
               "use 'response_format' of type 'json_object'.", "type": "invalid_request_error"}},
    {"error": {"code": "missing_required_parameter", "param": "message",
               "message": "you must provide a messages parameter", "type": "invalid_request_error"}},
    {"error": {"code": "InvalidParameter", "message": "The parameter `max_tokens` specified in "
               "the request are not valid: expected an integer, but got `\"1000\"` instead. "
               "Request id: 0217", "param": "max_tokens", "type": "BadRequest"}},
    {"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"role\" at "
               "'contents[0].parts': Cannot find field.", "status": "INVALID_ARGUMENT"}},
    {"error": {"code": 400, "message": "Request contains an invalid argument.",
               "status": "INVALID_ARGUMENT"}},
    {"error": {"code": None, "message": "Your request was rejected as a result of our safety "
               "system. Your prompt may contain text that is not allowed by our safety system.",
               "param": None, "type": "invalid_request_error"}},
    {"type": "error", "error": {"type": "invalid_request_error",
                                "message": "messages: text content blocks must contain "
                                           "non-whitespace text"}},
    {"error": {"message": "Invalid type for 'messages[0].content': expected a string, but got an "
               "array instead.", "type": "invalid_request_error", "param": "messages[0].content",
               "code": "invalid_type"}},
    {"error": {"message": "litellm.BadRequestError: GroqException - Error code: 400 - {'error': "
               "{'message': \"'messages.0' : for 'role:system' the following must be satisfied"
               "[('messages.0.content' : value must be a string)]\", 'type': "
               "'invalid_request_error'}}"}},
    {"object": "error", "message": "[{'type': 'string_type', 'loc': ('body', 'messages', 2, "
     "'function_call'), 'msg': 'Input should be a valid string', 'input': {'name': "
     "'function call', 'arguments': '{}'}, 'url': 'https://errors.pydantic.dev/2.6/v/string_type'"
     "}]", "type": "BadRequestError", "param": None, "code": 400},
    {"error": {"message": "invalid request body, failed to validate schema: (1) Reason: got "
               "array, want string, Location: /properties/messages/items/properties/content/"
               "oneOf/0/type.", "code": "invalid_request_body"}},
    {"error": {"message": "<400> InternalError.Algo.InvalidParameter: An assistant message with "
               "\"tool_calls\" must be followed by tool messages responding to each "
               "\"tool_call_id\".", "type": "invalid_request_error"}},
    {"error": {"message": "[1214][prompt 参数非法。请检查文档。]", "type": "invalid_request_error",
               "param": None, "code": None}},
]

# The same servers' 400s quoting back a part of the request (a prompt, a tool's name): vLLM's
# and SGLang's validation errors carry the offending input (vllm #49239: "the request's entire
# input payload is echoed"; the DeepSeek deployment of MiaAI-Lab #138 echoed the whole
# conversation), OpenAI's schema errors name the function; the user's words here speak of a
# balance, arrears, a quota, as an accountant's, a telecom help desk's or a developer's do
_ECHOING_400 = [
    {"object": "error", "message": "[{'type': 'missing', 'loc': ('body', 'messages', 1, "
     "'content'), 'msg': 'Field required', 'input': {'role': 'user', 'contnt': 'Draft a polite "
     "reminder about the overdue balance on invoice 1042'}}]", "type": "BadRequestError",
     "param": None, "code": 400},
    {"error": {"message": "240 validation errors:\n  {'type': 'string_type', 'loc': ('body', "
               "'input', 'str'), 'msg': 'Input should be a valid string', 'input': [{'role': "
               "'system', 'content': '你是电信客服，回答用户关于账户欠费、余额不足的问题'}, "
               "{'role': 'user', 'content': [{'type': 'input_text', 'text': '我欠费了吗'}]}]}"}},
    {"error": {"message": "1 validation error for ChatCompletionRequest\nmessages.0.content.str\n"
               "  Input should be a valid string [type=string_type, input_value=[{'text': 'Why "
               "is my account in arrears?', 'type': 'input_text'}], input_type=list]"}},
    {"error": {"message": "Invalid schema for function 'list_arrearage_accounts': In context=(), "
               "'additionalProperties' is required to be supplied and to be false.",
               "type": "invalid_request_error", "param": "tools[0].function.parameters",
               "code": "invalid_function_parameters"}},
    {"error": {"message": "'why does my app get insufficient_quota errors?' is not of type "
               "'object' - 'messages.1'", "type": "invalid_request_error", "param": None,
               "code": None}},
    {"error": {"message": "litellm.BadRequestError: OpenAIException - Error code: 400 - "
               "{'object': 'error', 'message': \"[{'type': 'string_type', 'loc': ('body', "
               "'messages', 1, 'content', 'str'), 'msg': 'Input should be a valid string', "
               "'input': [{'type': 'txt', 'text': 'Customer 88 has had an overdue balance "
               "since May'}]}]\", 'type': 'BadRequestError', 'param': None, 'code': 400}",
               "code": "400"}},
    {"object": "error", "message": "[{'type': 'literal_error', 'loc': ('body', 'tools', 0, "
     "'type'), 'msg': \"Input should be 'function'\", 'input': {'type': 'fn', 'function': "
     "{'name': 'overdue', 'description': 'List the customers in arrears, each with the overdue "
     "balance and 欠费 days'}}}]", "type": "BadRequestError", "param": None, "code": 400},
]


@pytest.mark.parametrize("status", [400, 403])
@pytest.mark.parametrize("body", _ORDINARY_400 + _ECHOING_400)
def test_an_ordinary_refusal_quoting_the_user_s_words_of_money_is_no_dead_key(status, body):
    """A 400 or 403 read as an empty balance takes the key out of rotation for every process
    (rechecked hourly at most): the pool's every key, one malformed request each, when the
    words were the user's, quoted back by a validation error. Decision 234 read the quota
    codes anywhere in the words of a 400 or 403 ("arrearage" in a tool's name, a developer's
    "insufficient_quota"), and "overdue balance"; the balance markers before it read an echoed
    prompt ("欠费", "in arrears") as the provider's own."""
    got = error_from_status(status, {}, body, now=NOW)
    assert type(got) is (BadRequest if status == 400 else AuthenticationFailed)


@pytest.mark.parametrize("body", _ECHOING_400)
def test_a_429_quoting_the_user_s_words_of_money_stays_a_wait(body):
    """The 429 path reads a balance's words too (a gateway answering every refusal with a 429),
    and read them in the whole message: the same validation errors quoting back a prompt about an
    overdue balance, 欠费 or a developer's "insufficient_quota", sent as a 429, took the key out
    of rotation for every process instead of a wait."""
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited

@pytest.mark.parametrize("body", [
    # LiteLLM re-raising Anthropic's empty prepaid balance: the provider's JSON in the words
    {"error": {"message": "litellm.BadRequestError: AnthropicException - {\"type\":\"error\","
               "\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance "
               "is too low to access the Anthropic API. Please go to Plans & Billing to upgrade "
               "or purchase credits.\"}}"}},
    # claude-code-router's "Error from provider" (its #429 shape): Zhipu's 1113, quotes escaped
    {"error": {"message": "Error from provider: {\\\"error\\\":{\\\"code\\\":\\\"1113\\\","
               "\\\"message\\\":\\\"余额不足或无可用资源包,请充值。\\\"}}", "type": "api_error",
               "code": "provider_response_error"}},
])
def test_a_gateway_quoting_the_provider_s_empty_balance_still_reads_it(body):
    """The request a validation error quotes back is not read (error_echo); the provider's own
    message a gateway quotes whole is."""
    assert type(error_from_status(400, {}, body, now=NOW)) is QuotaExhausted
